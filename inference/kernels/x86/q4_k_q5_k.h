// Q4_K and Q5_K weights (and Q4_1 / Q5_1, which share their kernels) on
// AVX2 and AVX-512 VNNI: DotTileQ45K, one weight row at a time (vec_dot and
// the fallback), and the lane kernel below; batches go through the panels of
// q4_k_q5_k_avx2.h and q4_k_q5_k_avx512.h.
//
// Small-batch (decode) x86 kernel for the types that have a panel kernel:
// 8 weight rows at a time (Q4_1 / Q5_1 unpacked row-major first; Q4_K / Q5_K
// read from their GGUF blocks); the integer dot of each (weight row,
// sub-block or super-block) is reduced to one int32 lane per row, then each
// lane takes exactly the float steps of the panel kernels (q4_k_q5_k_avx512.h,
// q4_k_q5_k_avx2.h: same operations, same order, per lane).
// So an output row of MatMul is bitwise the same whether it comes from here
// (m < 4) or from a panel (m >= 4): it depends only on its input row.
// Included after panel_common.h by the per-instruction-set kernel files
// (VNNI dot products when compiled with AVX-512 VNNI); internal linkage.
#pragma once

#include <immintrin.h>

#include "inference/kernels/x86/panel_common.h"

namespace ragd::inference::kernels {
namespace {

// Q4_K / Q5_K: scales applied in 16-bit (madd), mins through the bsums.
template <GgmlType kType, int C>
void DotTileQ45K(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out) {
  using Block = std::conditional_t<kType == GgmlType::kQ4_K, BlockQ4_K, BlockQ5_K>;
  const auto* w = reinterpret_cast<const Block*>(w_row);
  const BlockQ8K* a[C];
  __m256 acc[C];
  float mins_acc[C];
  for (int c = 0; c < C; ++c) {
    a[c] = reinterpret_cast<const BlockQ8K*>(acts[c]);
    acc[c] = _mm256_setzero_ps();
    mins_acc[c] = 0;
  }
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const Block& blk = w[b];
    alignas(32) int16_t mins_pairs[16];
    int16_t scales[8];
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, mn;
      UnpackScaleMin(j, blk.scales, &sc, &mn);
      scales[j] = sc;
      mins_pairs[2 * j] = mins_pairs[2 * j + 1] = mn;
    }
    const float d = H2F(blk.d), dmin = H2F(blk.dmin);
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kType == GgmlType::kQ5_K) qh = LoadU(blk.qh);
    __m256i isum[C];
    for (int c = 0; c < C; ++c) isum[c] = _mm256_setzero_si256();
    for (int ch = 0; ch < 4; ++ch) {
      __m256i lo, hi;
      UnpackChunkQ45K<kType>(blk, qh, ch, &lo, &hi);
      const __m256i sc_lo = _mm256_set1_epi16(scales[2 * ch]);
      const __m256i sc_hi = _mm256_set1_epi16(scales[2 * ch + 1]);
      for (int c = 0; c < C; ++c) {
        const int8_t* aq = a[c][b].qs + 64 * ch;
        isum[c] = _mm256_add_epi32(isum[c], DotU8I8Scaled(lo, LoadU(aq), sc_lo));
        isum[c] = _mm256_add_epi32(isum[c], DotU8I8Scaled(hi, LoadU(aq + 32), sc_hi));
      }
    }
    const __m256i mins16 = _mm256_load_si256(reinterpret_cast<const __m256i*>(mins_pairs));
    for (int c = 0; c < C; ++c) {
      const BlockQ8K& ab = a[c][b];
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_set1_ps(d * ab.d), acc[c]);
      const int32_t mins = HsumI(_mm256_madd_epi16(LoadU(ab.bsums), mins16));
      mins_acc[c] += dmin * ab.d * static_cast<float>(mins);
    }
  }
  for (int c = 0; c < C; ++c) out[c] = Hsum(acc[c]) - mins_acc[c];
}

constexpr int kLaneRows = 8;

// Eight int32x8 partial-sum vectors (v[r] for weight row r) -> one vector
// whose lane r is the total of v[r]; for 16-value sub-blocks (halves = true)
// *lo gets the sums of lanes 0..3 (first sub-block) and *hi of lanes 4..7.
inline void ReduceLanes(const __m256i v[8], __m256i* lo, __m256i* hi) {
  const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]);
  const __m256i h23 = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]);
  const __m256i h67 = _mm256_hadd_epi32(v[6], v[7]);
  const __m256i a = _mm256_hadd_epi32(h01, h23);  // 128-bit half L: rows 0..3, half L of each
  const __m256i b = _mm256_hadd_epi32(h45, h67);  // rows 4..7
  *lo = _mm256_permute2x128_si256(a, b, 0x20);
  *hi = _mm256_permute2x128_si256(a, b, 0x31);
}

// Integer dot of 32 unsigned weight quants with 32 signed activation quants,
// as 8 partial sums (lane l: values 4l..4l+3). Without VNNI the quants must
// be <= 127 (pairs are summed in int16 first).
inline __m256i DotPartial32(const uint8_t* w, const int8_t* a) {
#if RAGD_X86_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), LoadU(w), LoadU(a));
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(LoadU(w), LoadU(a)), _mm256_set1_epi16(1));
#endif
}

// One activation row, per sub-block: qs pointer, off, and per scale block
// da and msum, read from its BlockQ8A / BlockQ8K layout.
template <GgmlType kType>
struct ActView {
  static constexpr PanelTraits kT = TraitsFor(kType);
  const uint8_t* row;
  const int8_t* Qs(int64_t s) const {
    if constexpr (kT.group == 1) return reinterpret_cast<const BlockQ8A*>(row)[s].qs;
    return reinterpret_cast<const BlockQ8K*>(row)[s / (256 / kT.sub)].qs + kT.sub * (s % (256 / kT.sub));
  }
  int32_t Sum(int64_t s) const {
    if constexpr (kT.group == 1) return reinterpret_cast<const BlockQ8A*>(row)[s].sum;
    constexpr int kSubPerSuper = 256 / kT.sub, kPer = 16 / kSubPerSuper;
    const BlockQ8K& b = reinterpret_cast<const BlockQ8K*>(row)[s / kSubPerSuper];
    const int j = static_cast<int>(s % kSubPerSuper);
    int32_t sum = 0;
    for (int t = 0; t < kPer; ++t) sum += b.bsums[kPer * j + t];
    return sum;
  }
  float Da(int64_t s) const {  // activation scale of sub-block s
    if constexpr (kT.group == 1) return reinterpret_cast<const BlockQ8A*>(row)[s].d;
    return reinterpret_cast<const BlockQ8K*>(row)[s / (256 / kT.sub)].d;
  }
};

// Eight weight rows (already unpacked in p: rows_q row-major, scales as in
// panel_common.h with R = 8) times one activation row -> 8 lanes of y.
template <GgmlType kType>
__m256 LaneTile(const Panel& p, int64_t k, const ActView<kType>& a) {
  constexpr PanelTraits kT = TraitsFor(kType);
  const int64_t n_sub = k / kT.sub;
  __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
  __m256i total = _mm256_setzero_si256(), mins = _mm256_setzero_si256();
  __m256i pending = _mm256_setzero_si256();  // second 16-value sub-block (Q6_K)
  for (int64_t s = 0; s < n_sub; ++s) {
    __m256i isum;
    if (kT.sub == 16 && (s & 1)) {
      isum = pending;
    } else {
      __m256i v[kLaneRows];
      const int8_t* aq = a.Qs(s);
      for (int r = 0; r < kLaneRows; ++r) v[r] = DotPartial32(p.rows_q.data() + r * k + s * kT.sub, aq);
      __m256i lo, hi;
      ReduceLanes(v, &lo, &hi);
      if constexpr (kT.sub == 16) {
        isum = lo;
        pending = hi;
      } else {
        isum = _mm256_add_epi32(lo, hi);
      }
    }
    isum = _mm256_add_epi32(_mm256_set1_epi32(-kT.offset * a.Sum(s)), isum);
    const float da = a.Da(s);
    if constexpr (kT.group == 1) {
      const __m256 sc = _mm256_loadu_ps(p.scale.data() + s * kLaneRows);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(sc, _mm256_set1_ps(da)), acc);
      if constexpr (kT.has_min) {
        const float msum = da * static_cast<float>(a.Sum(s));
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(p.mterm.data() + s * kLaneRows), _mm256_set1_ps(msum), acc);
      }
    } else {
      total = _mm256_add_epi32(total, _mm256_mullo_epi32(isum, LoadU(p.iscale.data() + s * kLaneRows)));
      if constexpr (kT.has_min) {
        mins = _mm256_add_epi32(
            mins, _mm256_mullo_epi32(LoadU(p.imin.data() + s * kLaneRows), _mm256_set1_epi32(a.Sum(s))));
      }
      if ((s + 1) % kT.group == 0) {
        const int64_t g = s / kT.group;
        const __m256 d = _mm256_loadu_ps(p.dsup.data() + g * kLaneRows);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total), _mm256_mul_ps(d, _mm256_set1_ps(da)), acc);
        if constexpr (kT.has_min) {
          const __m256 dm = _mm256_loadu_ps(p.msup.data() + g * kLaneRows);
          accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_mul_ps(dm, _mm256_set1_ps(da)), accm);
        }
        total = mins = _mm256_setzero_si256();
      }
    }
  }
  if constexpr (kT.group > 1 && kT.has_min) acc = _mm256_sub_ps(acc, accm);
  return acc;
}

// The 6-bit scales and mins of a Q4_K / Q5_K super-block, sub-block j in
// byte j of each, from its 12 packed bytes (UnpackScaleMin's layout: four
// sub-blocks to a 32-bit word).
inline void ScalesAndMins(const uint8_t* packed, uint64_t* scales, uint64_t* mins) {
  uint32_t w0, w1, w2;
  std::memcpy(&w0, packed, 4);
  std::memcpy(&w1, packed + 4, 4);
  std::memcpy(&w2, packed + 8, 4);
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  const uint32_t sc_hi = (w2 & kLow4) | (((w0 >> 6) & kLow2) << 4);
  const uint32_t mn_hi = ((w2 >> 4) & kLow4) | (((w1 >> 6) & kLow2) << 4);
  *scales = (w0 & kLow6) | (uint64_t{sc_hi} << 32);
  *mins = (w1 & kLow6) | (uint64_t{mn_hi} << 32);
}

// LaneTile for Q4_K / Q5_K straight from the GGUF blocks of weight rows
// [p0, p0 + rows), rows <= 8. Per super-block, ISUM (scales applied in
// 16-bit by vpmaddwd) and MINS (through the 16-value bsums) of each row are
// exact integers whatever order they are summed in, and the float steps on
// them are LaneTile's; so the result is bitwise LaneTile's (and the panels')
// without unpacking the rows to memory first, which cost decode about half
// its time on AVX2. Each row is read front to back in one pass (one stream
// for the prefetcher); its per-super-block partial sums wait in `sums`.
template <GgmlType kType>
__m256 LaneTileK(const WeightView& w, int64_t p0, int rows, const BlockQ8K* a) {
  using Block = std::conditional_t<kType == GgmlType::kQ4_K, BlockQ4_K, BlockQ5_K>;
  const int64_t n_super = w.n_in / kQKK;
  // [super-block][ISUM, MINS][row]: the integer as 8 int32 partial sums
  thread_local std::vector<int32_t> sums;
  sums.assign(static_cast<size_t>(n_super) * 2 * kLaneRows * 8, 0);
  const auto sum_at = [&](int64_t i) { return reinterpret_cast<__m256i*>(sums.data() + 8 * i); };
  thread_local std::vector<float> scales;  // [super-block][d, dmin][row]
  scales.assign(static_cast<size_t>(n_super) * 2 * kLaneRows, 0.0f);
  __m256i pick[8];  // pick[j]: 16-bit element j of each 128-bit half, everywhere
  for (int j = 0; j < 8; ++j) pick[j] = _mm256_set1_epi16(static_cast<int16_t>((2 * j + 1) << 8 | 2 * j));
  for (int r = 0; r < rows; ++r) {
    const Block* row = reinterpret_cast<const Block*>(w.data + static_cast<size_t>(p0 + r) * w.row_bytes);
    for (int64_t b = 0; b < n_super; ++b) {
      const Block& blk = row[b];
      const BlockQ8K& ab = a[b];
      scales[(2 * b) * kLaneRows + r] = H2F(blk.d);
      scales[(2 * b + 1) * kLaneRows + r] = H2F(blk.dmin);
      uint64_t sc, mn;
      ScalesAndMins(blk.scales, &sc, &mn);
      const __m256i sc16 =
          _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc))));
      const __m128i mn8 = _mm_cvtsi64_si128(static_cast<int64_t>(mn));
      _mm256_storeu_si256(
          sum_at((2 * b + 1) * kLaneRows + r),
          _mm256_madd_epi16(LoadU(ab.bsums), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8))));
      __m256i qh = _mm256_setzero_si256();
      if constexpr (kType == GgmlType::kQ5_K) qh = LoadU(blk.qh);
      __m256i isum = _mm256_setzero_si256();
      for (int ch = 0; ch < 4; ++ch) {
        __m256i lo, hi;
        UnpackChunkQ45K<kType>(blk, qh, ch, &lo, &hi);
        const int8_t* aq = ab.qs + 64 * ch;
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, LoadU(aq)),
                                                        _mm256_shuffle_epi8(sc16, pick[2 * ch])));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, LoadU(aq + 32)),
                                                        _mm256_shuffle_epi8(sc16, pick[2 * ch + 1])));
      }
      _mm256_storeu_si256(sum_at((2 * b) * kLaneRows + r), isum);
    }
  }
  __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_super; ++b) {
    __m256i v[kLaneRows], lo, hi;
    for (int r = 0; r < kLaneRows; ++r) v[r] = LoadU(sum_at((2 * b) * kLaneRows + r));
    ReduceLanes(v, &lo, &hi);
    const __m256i total = _mm256_add_epi32(lo, hi);
    for (int r = 0; r < kLaneRows; ++r) v[r] = LoadU(sum_at((2 * b + 1) * kLaneRows + r));
    ReduceLanes(v, &lo, &hi);
    const __m256i mins = _mm256_add_epi32(lo, hi);
    const __m256 da = _mm256_set1_ps(a[b].d);
    const float* d = scales.data() + (2 * b) * kLaneRows;
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total), _mm256_mul_ps(_mm256_loadu_ps(d), da), acc);
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_mul_ps(_mm256_loadu_ps(d + kLaneRows), da), accm);
  }
  return _mm256_sub_ps(acc, accm);
}

template <GgmlType kType>
void MulRowsLanesT(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                   int64_t ldy, int64_t r0, int64_t r1) {
  constexpr bool kFused = kType == GgmlType::kQ4_K || kType == GgmlType::kQ5_K;
  thread_local Panel rows;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t p0 = r0; p0 < r1; p0 += kLaneRows) {
    const int n = static_cast<int>(r1 - p0 < kLaneRows ? r1 - p0 : kLaneRows);
    if constexpr (!kFused) UnpackRows<kType>(w, p0, n, kLaneRows, &rows);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
    for (int64_t c = 0; c < m; ++c) {
      const uint8_t* a = act + static_cast<size_t>(c) * act_stride;
      if constexpr (kFused) {
        _mm256_maskstore_ps(y + c * ldy + p0, mask,
                            LaneTileK<kType>(w, p0, n, reinterpret_cast<const BlockQ8K*>(a)));
      } else {
        _mm256_maskstore_ps(y + c * ldy + p0, mask, LaneTile<kType>(rows, w.n_in, ActView<kType>{a}));
      }
    }
  }
}

// Rows [r0, r1) times m activation rows (BlockQ8A / BlockQ8K layout); for
// the panel types only.
void MulRowsLanes(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                  int64_t ldy, int64_t r0, int64_t r1) {
  switch (w.type) {
    case GgmlType::kQ4_1:
      return MulRowsLanesT<GgmlType::kQ4_1>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ5_1:
      return MulRowsLanesT<GgmlType::kQ5_1>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ4_K:
      return MulRowsLanesT<GgmlType::kQ4_K>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ5_K:
      return MulRowsLanesT<GgmlType::kQ5_K>(w, act, act_stride, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsLanes: no lane kernel for this type");
  }
}

// Whether MulRowsLanes handles `type`: the types with a panel kernel.
constexpr bool HasLaneKernel(GgmlType type) {
  return type == GgmlType::kQ4_1 || type == GgmlType::kQ5_1 || type == GgmlType::kQ4_K ||
         type == GgmlType::kQ5_K;
}

}  // namespace
}  // namespace ragd::inference::kernels
