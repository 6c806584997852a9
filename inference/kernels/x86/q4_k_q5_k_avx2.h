// Batched (prefill) kernel for AVX2 on 8-row panels (layout in
// panel_common.h): vpmaddubsw + vpmaddwd multiply 4 values of 8 weight
// rows by 4 broadcast activation values. Q8_0 is not handled (its unsigned
// quants would overflow vpmaddubsw's 16-bit sums) and takes the row path.
// Included only by kernels_avx2.cpp; internal linkage.
#pragma once

#include <immintrin.h>

#include "inference/kernels/x86/panel_common.h"

namespace ragd::inference::kernels {
namespace {

constexpr int kPanelRows8 = 8;
constexpr int kPanelCols4 = 4;  // activation rows per tile

// Transposes an 8x8 matrix of dwords: in[r] holds row r, out[j] column j.
inline void Transpose8x8(const __m256i in[8], __m256i out[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
  }
  // u[4q + k] holds, in 128-bit lane L, column 4L + k of rows 4q..4q+3.
  for (int q = 0; q < 2; ++q) {
    u[4 * q + 0] = _mm256_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 1] = _mm256_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 2] = _mm256_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
    u[4 * q + 3] = _mm256_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    out[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

// Repacks rows [r0, r0 + rows) (rows <= 8; missing rows are zero).
template <GgmlType kType>
void Repack8(const WeightView& w, int64_t r0, int rows, Panel* p) {
  const int64_t k = w.n_in, n_dw = k / 4;
  p->q.resize(static_cast<size_t>(n_dw) * 32);
  UnpackRows<kType>(w, r0, rows, kPanelRows8, p);
  for (int64_t i = 0; i < n_dw; i += 8) {  // k is a multiple of 32
    __m256i in[8], out[8];
    for (int r = 0; r < kPanelRows8; ++r) in[r] = LoadU(p->rows_q.data() + r * k + 4 * i);
    Transpose8x8(in, out);
    for (int j = 0; j < 8; ++j)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p->q.data() + (i + j) * 32), out[j]);
  }
}

// y[c*ldy + r0 + lane] for the C activation rows of the tile at c0, one panel.
template <GgmlType kType, int C>
void PanelTile8(const Panel& p, const PreparedActs& pa, int64_t c0, float* y, int64_t ldy, int64_t r0,
                int rows) {
  constexpr PanelTraits kT = TraitsFor(kType);
  constexpr int kDw = kT.sub / 4;  // dwords per sub-block (even)
  const int64_t n_sub = pa.n_sub;
  const int8_t* qs = pa.qs.data() + c0 * pa.k;
  const int32_t* off = pa.off.data() + c0 * n_sub;
  const float* da = pa.da.data() + c0 * pa.n_scale;
  const uint8_t* wq = p.q.data();
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[C], accm[C];
  for (int c = 0; c < C; ++c) acc[c] = accm[c] = _mm256_setzero_ps();
  // Integer dot of one sub-block (kDw dwords) of the panel rows with each row.
  auto dot = [&](__m256i* isum) {
    for (int c = 0; c < C; ++c) isum[c] = _mm256_set1_epi32(off[c]);
    for (int t = 0; t < kDw; t += 2) {
      const __m256i w0 = LoadU(wq + t * 32), w1 = LoadU(wq + t * 32 + 32);
      for (int c = 0; c < C; ++c) {
        int32_t a0, a1;
        std::memcpy(&a0, qs + c * kT.sub + 4 * t, 4);
        std::memcpy(&a1, qs + c * kT.sub + 4 * t + 4, 4);
        // Two pair sums fit in int16 for quants <= 63.
        const __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, _mm256_set1_epi32(a0)),
                                             _mm256_maddubs_epi16(w1, _mm256_set1_epi32(a1)));
        isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(p16, ones));
      }
    }
    wq += kDw * 32;
    qs += C * kT.sub;
    off += C;
  };
  if constexpr (kT.group == 1) {
    const float* msum = pa.msum.data() + c0 * n_sub;
    const float* scale = p.scale.data();
    const float* mterm = p.mterm.data();
    for (int64_t j = 0; j < n_sub; ++j) {
      __m256i isum[C];
      dot(isum);
      const __m256 sc = _mm256_loadu_ps(scale);
      for (int c = 0; c < C; ++c) {
        acc[c] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(sc, _mm256_set1_ps(da[c])), acc[c]);
      }
      if constexpr (kT.has_min) {
        const __m256 mt = _mm256_loadu_ps(mterm);
        for (int c = 0; c < C; ++c) acc[c] = _mm256_fmadd_ps(mt, _mm256_set1_ps(msum[c]), acc[c]);
        mterm += 8;
        msum += C;
      }
      scale += 8;
      da += C;
    }
  } else {
    const int32_t* asum = pa.asum.data() + c0 * n_sub;
    const int32_t* iscale = p.iscale.data();
    const int32_t* imin = p.imin.data();
    const float* dsup = p.dsup.data();
    const float* msup = p.msup.data();
    for (int64_t g = 0; g < n_sub / kT.group; ++g) {
      __m256i total[C], mins[C];
      for (int c = 0; c < C; ++c) total[c] = mins[c] = _mm256_setzero_si256();
      for (int j = 0; j < kT.group; ++j) {
        __m256i isum[C];
        dot(isum);
        const __m256i sc = LoadU(iscale);
        for (int c = 0; c < C; ++c) total[c] = _mm256_add_epi32(total[c], _mm256_mullo_epi32(isum[c], sc));
        if constexpr (kT.has_min) {
          const __m256i mn = LoadU(imin);
          for (int c = 0; c < C; ++c) {
            mins[c] = _mm256_add_epi32(mins[c], _mm256_mullo_epi32(mn, _mm256_set1_epi32(asum[c])));
          }
          imin += 8;
          asum += C;
        }
        iscale += 8;
      }
      const __m256 d = _mm256_loadu_ps(dsup);
      for (int c = 0; c < C; ++c) {
        acc[c] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(total[c]), _mm256_mul_ps(d, _mm256_set1_ps(da[c])), acc[c]);
      }
      if constexpr (kT.has_min) {
        const __m256 dm = _mm256_loadu_ps(msup);
        for (int c = 0; c < C; ++c) {
          accm[c] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins[c]), _mm256_mul_ps(dm, _mm256_set1_ps(da[c])), accm[c]);
        }
        msup += 8;
      }
      dsup += 8;
      da += C;
    }
    if constexpr (kT.has_min) {
      for (int c = 0; c < C; ++c) acc[c] = _mm256_sub_ps(acc[c], accm[c]);
    }
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), lane);
  for (int c = 0; c < C; ++c) _mm256_maskstore_ps(y + (c0 + c) * ldy + r0, mask, acc[c]);
}

template <GgmlType kType>
void MulRowsPanel8T(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                    int64_t r0, int64_t r1) {
  thread_local Panel panel;
  using TileFn = void (*)(const Panel&, const PreparedActs&, int64_t, float*, int64_t, int64_t, int);
  static constexpr TileFn kTiles[kPanelCols4] = {PanelTile8<kType, 1>, PanelTile8<kType, 2>,
                                                 PanelTile8<kType, 3>, PanelTile8<kType, 4>};
  for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows8) {
    const int rows = static_cast<int>(r1 - p0 < kPanelRows8 ? r1 - p0 : kPanelRows8);
    Repack8<kType>(w, p0, rows, &panel);
    for (int64_t c0 = 0; c0 < m; c0 += kPanelCols4) {
      const int cols = static_cast<int>(m - c0 < kPanelCols4 ? m - c0 : kPanelCols4);
      kTiles[cols - 1](panel, acts, c0, y, ldy, p0, rows);
    }
  }
}

// The activations of one MatMul in the AVX2 panel layout, or nullptr when
// the type has no AVX2 panel kernel.
const PreparedActs* PreparePanelActs8(GgmlType type, const uint8_t* act, size_t stride, int64_t m, int64_t k,
                                      ThreadPool* pool) {
  if (type == GgmlType::kQ8_0) return nullptr;
  return PreparePanelActsT<kPanelCols4>(type, act, stride, m, k, pool);
}

// Rows [r0, r1) through 8-row panels with activations from PreparePanelActs8.
void MulRowsPanel8(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                   int64_t r0, int64_t r1) {
  switch (w.type) {
    case GgmlType::kQ4_1:
      return MulRowsPanel8T<GgmlType::kQ4_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_1:
      return MulRowsPanel8T<GgmlType::kQ5_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ4_K:
      return MulRowsPanel8T<GgmlType::kQ4_K>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_K:
      return MulRowsPanel8T<GgmlType::kQ5_K>(w, acts, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsPanel8: no AVX2 panel kernel for this type");
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
