// Batched (prefill) kernel for AVX-512 VNNI on 16-row panels (layout in
// x86_panel_common.h): one vpdpbusd multiplies 4 values of 16 weight rows by
// 4 broadcast activation values. Included only by kernels_avx512.cpp;
// internal linkage.
#pragma once

#include <immintrin.h>

#include "inference/kernels/x86_panel_common.h"

namespace ragd::inference::kernels {
namespace {

constexpr int kPanelRows = 16;
constexpr int kPanelCols = 8;  // activation rows per tile

// int32 -> float (the zero-masking form: GCC 12 warns about the plain one).
inline __m512 CvtI32F32(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xFFFF, v); }

// Transposes a 16x16 matrix of dwords: in[r] holds row r, out[j] column j.
inline void Transpose16x16(const __m512i in[16], __m512i out[16]) {
  __m512i t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
  }
  // u[4q + k] holds, in 128-bit lane L, column 4L + k of rows 4q..4q+3.
  for (int q = 0; q < 4; ++q) {
    u[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
    u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
    u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i a0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
    const __m512i a1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
    const __m512i b0 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
    const __m512i b1 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
    out[k] = _mm512_shuffle_i32x4(a0, b0, 0x88);
    out[4 + k] = _mm512_shuffle_i32x4(a0, b0, 0xDD);
    out[8 + k] = _mm512_shuffle_i32x4(a1, b1, 0x88);
    out[12 + k] = _mm512_shuffle_i32x4(a1, b1, 0xDD);
  }
}

// Repacks rows [r0, r0 + rows) (rows <= 16; missing rows are zero).
template <GgmlType kType>
void Repack(const WeightView& w, int64_t r0, int rows, Panel* p) {
  constexpr PanelTraits kT = TraitsFor(kType);
  const int64_t k = w.n_in, n_sub = k / kT.sub, n_dw = k / 4;
  p->q.resize(static_cast<size_t>(n_dw) * 64);
  p->scale.assign(static_cast<size_t>(n_sub) * 16, 0.0f);
  if (kT.has_min) p->mterm.assign(static_cast<size_t>(n_sub) * 16, 0.0f);
  p->rows_q.resize(static_cast<size_t>(k) * kPanelRows);
  p->row_scale.resize(static_cast<size_t>(n_sub));
  p->row_mterm.resize(static_cast<size_t>(n_sub));
  for (int r = 0; r < kPanelRows; ++r) {
    uint8_t* row_q = p->rows_q.data() + r * k;
    if (r >= rows) {
      std::memset(row_q, 0, static_cast<size_t>(k));
      continue;
    }
    UnpackRow<kType>(w.data + static_cast<size_t>(r0 + r) * w.row_bytes, k, row_q, p->row_scale.data(),
                     p->row_mterm.data());
    for (int64_t s = 0; s < n_sub; ++s) {
      p->scale[s * 16 + r] = p->row_scale[s];
      if (kT.has_min) p->mterm[s * 16 + r] = p->row_mterm[s];
    }
  }
  // Dword i of row r goes to (i*16 + r)*4: transpose 16x16 dword tiles.
  int64_t i = 0;
  for (; i + 16 <= n_dw; i += 16) {
    __m512i in[16], out[16];
    for (int r = 0; r < kPanelRows; ++r) in[r] = _mm512_loadu_si512(p->rows_q.data() + r * k + 4 * i);
    Transpose16x16(in, out);
    for (int j = 0; j < 16; ++j) _mm512_storeu_si512(p->q.data() + (i + j) * 64, out[j]);
  }
  for (; i < n_dw; ++i) {
    for (int r = 0; r < kPanelRows; ++r)
      std::memcpy(p->q.data() + (i * 16 + r) * 4, p->rows_q.data() + r * k + 4 * i, 4);
  }
}

// y[c*ldy + r0 + lane] for the C activation rows of the tile at c0, one panel.
template <GgmlType kType, int C>
void PanelTile(const Panel& p, const PreparedActs& pa, int64_t c0, float* y, int64_t ldy, int64_t r0,
               __mmask16 store_mask) {
  constexpr PanelTraits kT = TraitsFor(kType);
  constexpr int kDw = kT.sub / 4;  // dwords per sub-block
  const int64_t n_sub = pa.n_sub;
  const int8_t* qs = pa.qs.data() + c0 * pa.k;
  const int32_t* off = pa.off.data() + c0 * n_sub;
  const float* da = pa.da.data() + c0 * pa.n_scale;
  const float* msum = pa.msum.data() + c0 * n_sub;
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const uint8_t* wq = p.q.data();
  const float* scale = p.scale.data();
  const float* mterm = p.mterm.data();
  for (int64_t g = 0; g < n_sub / kT.group; ++g) {
    __m512 part[C];
    if constexpr (kT.group > 1) {
      for (int c = 0; c < C; ++c) part[c] = _mm512_setzero_ps();
    }
    for (int j = 0; j < kT.group; ++j) {
      __m512i isum[C];
      for (int c = 0; c < C; ++c) isum[c] = _mm512_set1_epi32(off[c]);
      for (int t = 0; t < kDw; ++t) {
        const __m512i wv = _mm512_loadu_si512(wq + t * 64);
        for (int c = 0; c < C; ++c) {
          int32_t a4;
          std::memcpy(&a4, qs + c * kT.sub + 4 * t, 4);
          isum[c] = _mm512_dpbusd_epi32(isum[c], wv, _mm512_set1_epi32(a4));
        }
      }
      const __m512 sc = _mm512_loadu_ps(scale);
      if constexpr (kT.group == 1) {
        for (int c = 0; c < C; ++c) {
          acc[c] = _mm512_fmadd_ps(CvtI32F32(isum[c]), _mm512_mul_ps(sc, _mm512_set1_ps(da[c])), acc[c]);
        }
      } else {
        for (int c = 0; c < C; ++c) part[c] = _mm512_fmadd_ps(CvtI32F32(isum[c]), sc, part[c]);
      }
      if constexpr (kT.has_min) {
        const __m512 mt = _mm512_loadu_ps(mterm);
        for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(mt, _mm512_set1_ps(msum[c]), acc[c]);
        mterm += 16;
        msum += C;
      }
      wq += kDw * 64;
      qs += C * kT.sub;
      off += C;
      scale += 16;
      if constexpr (kT.group == 1) da += C;
    }
    if constexpr (kT.group > 1) {
      for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(part[c], _mm512_set1_ps(da[c]), acc[c]);
      da += C;
    }
  }
  for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + (c0 + c) * ldy + r0, store_mask, acc[c]);
}

template <GgmlType kType>
void MulRowsPanelT(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                   int64_t r0, int64_t r1) {
  thread_local Panel panel;
  using TileFn = void (*)(const Panel&, const PreparedActs&, int64_t, float*, int64_t, int64_t, __mmask16);
  static constexpr TileFn kTiles[kPanelCols] = {PanelTile<kType, 1>, PanelTile<kType, 2>, PanelTile<kType, 3>,
                                                PanelTile<kType, 4>, PanelTile<kType, 5>, PanelTile<kType, 6>,
                                                PanelTile<kType, 7>, PanelTile<kType, 8>};
  for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows) {
    const int rows = static_cast<int>(r1 - p0 < kPanelRows ? r1 - p0 : kPanelRows);
    Repack<kType>(w, p0, rows, &panel);
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    for (int64_t c0 = 0; c0 < m; c0 += kPanelCols) {
      const int cols = static_cast<int>(m - c0 < kPanelCols ? m - c0 : kPanelCols);
      kTiles[cols - 1](panel, acts, c0, y, ldy, p0, mask);
    }
  }
}

// The activations of one MatMul in the AVX-512 panel layout, or nullptr.
const PreparedActs* PreparePanelActs(GgmlType type, const uint8_t* act, size_t stride, int64_t m, int64_t k,
                                     ThreadPool* pool) {
  return PreparePanelActsT<kPanelCols>(type, act, stride, m, k, pool);
}

// Rows [r0, r1) through panels with activations from PreparePanelActs.
void MulRowsPanel(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  switch (w.type) {
    case GgmlType::kQ4_0:
      return MulRowsPanelT<GgmlType::kQ4_0>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ4_1:
      return MulRowsPanelT<GgmlType::kQ4_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_0:
      return MulRowsPanelT<GgmlType::kQ5_0>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_1:
      return MulRowsPanelT<GgmlType::kQ5_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ8_0:
      return MulRowsPanelT<GgmlType::kQ8_0>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ4_K:
      return MulRowsPanelT<GgmlType::kQ4_K>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_K:
      return MulRowsPanelT<GgmlType::kQ5_K>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ6_K:
      return MulRowsPanelT<GgmlType::kQ6_K>(w, acts, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsPanel: no panel kernel for this type");
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
