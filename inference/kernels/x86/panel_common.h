// Shared parts of the batched (prefill) x86 kernels: R weight rows (16 for
// AVX-512, 8 for AVX2) are repacked into a panel of unsigned 8-bit quants
// interleaved 4 bytes per row, so one integer dot-product instruction
// multiplies 4 values of R rows by 4 broadcast activation values, and each
// panel is reused for every activation row. Included only by the
// per-instruction-set kernel files; internal linkage.
//
// Panel of R rows and K values, sub-blocks of S values (S = 32; 16 for Q6_K):
//   q[K/4][R][4]  u8: dword i of row r at (i*R + r)*4, quants in value order
//   legacy types (one sub-block per scale block):
//     scale[K/S][R] f32: d; mterm[K/S][R] f32: m (Q4_1/Q5_1)
//     row value = scale*(q - offset) + mterm
//   K-quants (sub-blocks grouped in 256-value super-blocks):
//     iscale[K/S][R] i32: sub-block scale sc; imin[K/S][R] i32: min mn (Q4_K/Q5_K)
//     dsup[K/256][R] f32: d; msup[K/256][R] f32: dmin (Q4_K/Q5_K)
//     row value = d*sc*(q - offset) - dmin*mn
// Float steps per output (K-quants), those of llama.cpp's Q4_K gemv: per
// super-block the exact integers ISUM = sum_j sc_j * dot_j and MINS = sum_j
// mn_j * asum_j, then acc = fma(float(ISUM), d*da, acc), accm =
// fma(float(MINS), dmin*da, accm); result acc - accm.
// Prepared activation row: qs[K] i8; off[K/S] i32 = -offset*sum(qs of the
// sub-block); da[K/(S*group)] f32 (one per activation scale block);
// msum[K/S] f32 = da*sum(qs of the sub-block) (legacy); asum[K/S] i32 = sum
// (K-quants).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <vector>

#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

struct PanelTraits {
  int sub;       // S: values per sub-block
  int group;     // sub-blocks sharing one activation scale (1: Q8A blocks)
  int offset;    // subtracted from the unsigned quants
  bool has_min;  // mterm present
};

constexpr PanelTraits TraitsFor(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0:
      return {32, 1, 8, false};
    case GgmlType::kQ4_1:
      return {32, 1, 0, true};
    case GgmlType::kQ5_0:
      return {32, 1, 16, false};
    case GgmlType::kQ5_1:
      return {32, 1, 0, true};
    case GgmlType::kQ8_0:
      return {32, 1, 128, false};
    case GgmlType::kQ4_K:
      return {32, 8, 0, true};
    case GgmlType::kQ5_K:
      return {32, 8, 0, true};
    case GgmlType::kQ6_K:
      return {16, 16, 32, false};
    default:
      return {0, 0, 0, false};
  }
}

// One unpacked weight row's scales (see above; each type fills its own).
struct RowScales {
  float* scale;     // [n_sub] legacy
  float* mterm;     // [n_sub] legacy with a min
  int32_t* iscale;  // [n_sub] K-quants
  int32_t* imin;    // [n_sub] Q4_K/Q5_K
  float* dsup;      // [n_super] K-quants
  float* msup;      // [n_super] Q4_K/Q5_K
};

// Chunk ch (values 64ch .. 64ch + 63) of a Q4_K / Q5_K super-block as
// unsigned quants: *lo its first sub-block (2ch), *hi its second; qh is the
// block's qh (Q5_K; ignored for Q4_K).
template <GgmlType kType, typename Block>
inline void UnpackChunkQ45K(const Block& blk, __m256i qh, int ch, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(15), bit = _mm256_set1_epi8(1);
  const __m256i raw = LoadU(blk.qs + 32 * ch);
  *lo = _mm256_and_si256(raw, low4);
  *hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
  if constexpr (kType == GgmlType::kQ5_K) {
    *lo = _mm256_or_si256(*lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * ch), bit), 4));
    *hi =
        _mm256_or_si256(*hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * ch + 1), bit), 4));
  }
}

// Unpacks one weight row: n unsigned quants (value order) and its scales.
template <GgmlType kType>
void UnpackRow(const uint8_t* row, int64_t n, uint8_t* q, const RowScales& rs) {
  if constexpr (TraitsFor(kType).group == 1) {
    for (int64_t b = 0; b < n / kQK; ++b) {
      __m256i v;
      if constexpr (kType == GgmlType::kQ4_0) {
        const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
        v = UnpackNibbles32(blk.qs);
        rs.scale[b] = H2F(blk.d);
      } else if constexpr (kType == GgmlType::kQ4_1) {
        const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
        v = UnpackNibbles32(blk.qs);
        rs.scale[b] = H2F(blk.d);
        rs.mterm[b] = H2F(blk.m);
      } else if constexpr (kType == GgmlType::kQ5_0) {
        const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
        v = UnpackQ5(blk);
        rs.scale[b] = H2F(blk.d);
      } else if constexpr (kType == GgmlType::kQ5_1) {
        const auto& blk = reinterpret_cast<const BlockQ5_1*>(row)[b];
        v = UnpackQ5(blk);
        rs.scale[b] = H2F(blk.d);
        rs.mterm[b] = H2F(blk.m);
      } else {
        const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
        v = _mm256_xor_si256(LoadU(blk.qs), _mm256_set1_epi8(static_cast<char>(0x80)));
        rs.scale[b] = H2F(blk.d);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), v);
    }
  } else if constexpr (kType == GgmlType::kQ4_K || kType == GgmlType::kQ5_K) {
    using Block = std::conditional_t<kType == GgmlType::kQ4_K, BlockQ4_K, BlockQ5_K>;
    for (int64_t b = 0; b < n / kQKK; ++b) {
      const Block& blk = reinterpret_cast<const Block*>(row)[b];
      rs.dsup[b] = H2F(blk.d);
      rs.msup[b] = H2F(blk.dmin);
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, mn;
        UnpackScaleMin(j, blk.scales, &sc, &mn);
        rs.iscale[8 * b + j] = sc;
        rs.imin[8 * b + j] = mn;
      }
      __m256i qh = _mm256_setzero_si256();
      if constexpr (kType == GgmlType::kQ5_K) qh = LoadU(blk.qh);
      for (int ch = 0; ch < 4; ++ch) {
        __m256i lo, hi;
        UnpackChunkQ45K<kType>(blk, qh, ch, &lo, &hi);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 256 * b + 64 * ch), lo);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 256 * b + 64 * ch + 32), hi);
      }
    }
  } else {  // Q6_K
    for (int64_t b = 0; b < n / kQKK; ++b) {
      const BlockQ6_K& blk = reinterpret_cast<const BlockQ6_K*>(row)[b];
      rs.dsup[b] = H2F(blk.d);
      for (int j = 0; j < 16; ++j) rs.iscale[16 * b + j] = blk.scales[j];
      for (int h = 0; h < 2; ++h) {
        __m256i v[4];
        UnpackQ6KHalf(blk, h, v);
        for (int k = 0; k < 4; ++k)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 256 * b + 128 * h + 32 * k), v[k]);
      }
    }
  }
}

// One panel of R weight rows (layout above) and its unpacking scratch.
struct Panel {
  std::vector<uint8_t> q;         // K/4 * R * 4
  std::vector<float> scale;       // K/S * R (legacy)
  std::vector<float> mterm;       // K/S * R (legacy with a min)
  std::vector<int32_t> iscale;    // K/S * R (K-quants)
  std::vector<int32_t> imin;      // K/S * R (Q4_K/Q5_K)
  std::vector<float> dsup, msup;  // K/256 * R (K-quants)
  std::vector<uint8_t> rows_q;    // R unpacked rows of K quants
  std::vector<float> row_scale, row_mterm, row_dsup, row_msup;
  std::vector<int32_t> row_iscale, row_imin;
};

// Unpacks weight rows [r0, r0 + rows) (rows <= R) into p: rows_q (R rows of
// K quants, row-major; missing rows are zero), scale and mterm ([K/S][R];
// missing rows 0).
template <GgmlType kType>
void UnpackRows(const WeightView& w, int64_t r0, int rows, int R, Panel* p) {
  constexpr PanelTraits kT = TraitsFor(kType);
  constexpr bool kK = kT.group > 1;
  const int64_t k = w.n_in, n_sub = k / kT.sub, n_super = k / 256;
  const size_t ns = static_cast<size_t>(n_sub), nsup = static_cast<size_t>(n_super);
  if constexpr (kK) {
    p->iscale.assign(ns * R, 0);
    p->dsup.assign(nsup * R, 0.0f);
    if (kT.has_min) {
      p->imin.assign(ns * R, 0);
      p->msup.assign(nsup * R, 0.0f);
    }
  } else {
    p->scale.assign(ns * R, 0.0f);
    if (kT.has_min) p->mterm.assign(ns * R, 0.0f);
  }
  p->rows_q.resize(static_cast<size_t>(k) * R);
  p->row_scale.resize(ns);
  p->row_mterm.resize(ns);
  p->row_iscale.resize(ns);
  p->row_imin.resize(ns);
  p->row_dsup.resize(nsup);
  p->row_msup.resize(nsup);
  const RowScales rs{p->row_scale.data(), p->row_mterm.data(), p->row_iscale.data(),
                     p->row_imin.data(),  p->row_dsup.data(),  p->row_msup.data()};
  for (int r = 0; r < R; ++r) {
    uint8_t* row_q = p->rows_q.data() + r * k;
    if (r >= rows) {
      std::memset(row_q, 0, static_cast<size_t>(k));
      continue;
    }
    UnpackRow<kType>(w.data + static_cast<size_t>(r0 + r) * w.row_bytes, k, row_q, rs);
    for (int64_t s = 0; s < n_sub; ++s) {
      if constexpr (kK) {
        p->iscale[s * R + r] = p->row_iscale[s];
        if (kT.has_min) p->imin[s * R + r] = p->row_imin[s];
      } else {
        p->scale[s * R + r] = p->row_scale[s];
        if (kT.has_min) p->mterm[s * R + r] = p->row_mterm[s];
      }
    }
    if constexpr (kK) {
      for (int64_t b = 0; b < n_super; ++b) {
        p->dsup[b * R + r] = p->row_dsup[b];
        if (kT.has_min) p->msup[b * R + r] = p->row_msup[b];
      }
    }
  }
}

// Activation rows, grouped in tiles of kTile rows (the last tile may be
// narrower, C rows); inside a tile, sub-block-major so the kernel walks one
// stream: tile at row c0 holds qs[n_sub][C][S] at qs + c0*k, off[n_sub][C] at
// off + c0*n_sub, da[n_scale][C] at da + c0*n_scale, msum[n_sub][C] at
// msum + c0*n_sub.
struct PreparedActs {
  int64_t k = 0, n_sub = 0, n_scale = 0;
  std::vector<int8_t> qs;
  std::vector<int32_t> off;
  std::vector<float> da;
  std::vector<float> msum;
  std::vector<int32_t> asum;
};

template <GgmlType kType, int kTile>
void PrepareActs(const uint8_t* act, size_t stride, int64_t m, int64_t k, PreparedActs* pa,
                 ThreadPool* pool) {
  constexpr PanelTraits kT = TraitsFor(kType);
  constexpr int kSubPerSuper = 256 / kT.sub;
  pa->k = k;
  pa->n_sub = k / kT.sub;
  pa->n_scale = pa->n_sub / kT.group;
  const int64_t n_sub = pa->n_sub, n_scale = pa->n_scale;
  pa->qs.resize(static_cast<size_t>(m * k));
  pa->off.resize(static_cast<size_t>(m * n_sub));
  pa->da.resize(static_cast<size_t>(m * n_scale));
  pa->msum.resize(static_cast<size_t>(m * n_sub));
  pa->asum.resize(static_cast<size_t>(m * n_sub));
  auto fill = [&](int64_t t0, int64_t t1, int) {
    for (int64_t c0 = t0 * kTile; c0 < m && c0 < t1 * kTile; c0 += kTile) {
      const int64_t cols = m - c0 < kTile ? m - c0 : kTile;
      int8_t* qs = pa->qs.data() + c0 * k;
      int32_t* off = pa->off.data() + c0 * n_sub;
      float* da = pa->da.data() + c0 * n_scale;
      float* msum = pa->msum.data() + c0 * n_sub;
      int32_t* asum = pa->asum.data() + c0 * n_sub;
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t* row = act + (c0 + c) * stride;
        if constexpr (kT.group == 1) {
          const auto* a = reinterpret_cast<const BlockQ8A*>(row);
          for (int64_t b = 0; b < n_sub; ++b) {
            std::memcpy(qs + (b * cols + c) * 32, a[b].qs, 32);
            off[b * cols + c] = -kT.offset * a[b].sum;
            da[b * cols + c] = a[b].d;
            msum[b * cols + c] = a[b].d * static_cast<float>(a[b].sum);
          }
        } else {
          const auto* a = reinterpret_cast<const BlockQ8K*>(row);
          constexpr int kPer = 16 / kSubPerSuper;  // bsums per sub-block (1 or 2)
          for (int64_t b = 0; b < k / kQKK; ++b) {
            da[b * cols + c] = a[b].d;
            for (int j = 0; j < kSubPerSuper; ++j) {
              const int64_t sub = b * kSubPerSuper + j;
              std::memcpy(qs + (sub * cols + c) * kT.sub, a[b].qs + kT.sub * j, kT.sub);
              int32_t sum = 0;
              for (int t = 0; t < kPer; ++t) sum += a[b].bsums[kPer * j + t];
              off[sub * cols + c] = -kT.offset * sum;
              asum[sub * cols + c] = sum;
            }
          }
        }
      }
    }
  };
  const int64_t n_tiles = (m + kTile - 1) / kTile;
  if (pool != nullptr && n_tiles >= 4) {
    pool->RunDynamic(n_tiles, std::max<int64_t>(1, n_tiles / (4 * pool->size())), fill);
  } else {
    fill(0, n_tiles, 0);
  }
}

// The activations of one MatMul in the panel layout with tiles of kTile rows
// (built by the calling thread, with `pool` if given; owned by the calling
// thread until its next call), or nullptr when the type has no panel kernel
// (Q4_0, Q5_0, Q8_0 and Q6_K take q4_0_q5_0_q8_0.h / q6_k.h for
// every batch size).
template <int kTile>
const PreparedActs* PreparePanelActsT(GgmlType type, const uint8_t* act, size_t stride, int64_t m, int64_t k,
                                      ThreadPool* pool) {
  thread_local PreparedActs acts;
  switch (type) {
    case GgmlType::kQ4_1:
      PrepareActs<GgmlType::kQ4_1, kTile>(act, stride, m, k, &acts, pool);
      break;
    case GgmlType::kQ5_1:
      PrepareActs<GgmlType::kQ5_1, kTile>(act, stride, m, k, &acts, pool);
      break;
    case GgmlType::kQ4_K:
      PrepareActs<GgmlType::kQ4_K, kTile>(act, stride, m, k, &acts, pool);
      break;
    case GgmlType::kQ5_K:
      PrepareActs<GgmlType::kQ5_K, kTile>(act, stride, m, k, &acts, pool);
      break;
    default:
      return nullptr;
  }
  return &acts;
}

}  // namespace
}  // namespace ragd::inference::kernels
