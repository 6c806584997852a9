// 16-row panels for AVX-512 (layout in panel_common.h): rows unpacked and
// transposed in 16 x 16 dword tiles, so that one vpdpbusd multiplies 4 values
// of 16 weight rows by 4 broadcast activation values. Shared by the AVX-512
// panel kernels of every type. Included only by kernels_avx512.cpp; internal
// linkage.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "inference/kernels/x86/panel_common.h"

namespace ragd::inference::kernels {
namespace {

constexpr int kPanelRows = 16;

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
  const int64_t k = w.n_in, n_dw = k / 4;
  p->q.resize(static_cast<size_t>(n_dw) * 64);
  UnpackRows<kType>(w, r0, rows, kPanelRows, p);
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

}  // namespace
}  // namespace ragd::inference::kernels
