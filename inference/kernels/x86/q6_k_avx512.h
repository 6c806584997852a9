// Q6_K weights packed at load (packed_weight.h) times Q8K activation rows on
// AVX-512 VNNI, for every batch size: bitwise the rows of the Q6_K row kernel
// (q6_k.h, llama.cpp's order), 16 weight rows at a time.
//
// Per output and super-block llama.cpp keeps eight int32 lanes: lane l sums,
// over the eight 32-value chunks k, sc[2k + (l >= 4)] times the dot of values
// 4l..4l+3 of the chunk, minus 32 * (bsum[2l]*sc[2l] + bsum[2l+1]*sc[2l+1]).
// Here one zmm holds lane l of the 16 panel rows. A chunk's 4 values of the
// 16 rows (64 bytes, put together from the packed block's nibbles and top
// bits) go through vpmaddubsw with the 4 broadcast activation values, then
// vpdpwssd with the rows' scales (both int16 halves of a row's dword hold its
// sc), which adds sc * (the 4 products) to the lane; the offset is one more
// vpdpwssd of the rows' (-32*sc[2l], -32*sc[2l+1]) pairs with the broadcast
// (bsum[2l], bsum[2l+1]).
// The integers are exact, so their order is free; the float steps are the
// row kernel's: acc_l = fma(float(lane_l), d_a*d_w, acc_l) over the
// super-blocks, the lanes summed as ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
// A tile takes L lanes of C activation rows (L*C = 8 pairs of accumulators).
// Included only by kernels_avx512.cpp; internal linkage.
#pragma once

#include <immintrin.h>

#include <cassert>
#include <cstring>
#include <utility>
#include <vector>

#include "inference/kernels/packed_weight.h"
#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

// A panel's scales as the tiles read them: per super-block, the 16
// sub-blocks' scale dwords (sc in both int16 halves), then the 8 lanes'
// offset pairs (-32*sc[2l] in the low half, -32*sc[2l+1] in the high one).
struct Q6PanelScales {
  static constexpr int kVectors = 16 + 8;  // per super-block
  std::vector<int32_t> v;                  // [n_super][kVectors][16 rows]

  int32_t* scale(int64_t b, int j) { return v.data() + (b * kVectors + j) * 16; }
  int32_t* offset(int64_t b, int l) { return scale(b, 16 + l); }
  const int32_t* scale(int64_t b, int j) const { return v.data() + (b * kVectors + j) * 16; }
  const int32_t* offset(int64_t b, int l) const { return scale(b, 16 + l); }
};

inline void ExpandQ6Scales(const PackedWeight& pw, int64_t panel, Q6PanelScales* s) {
  s->v.resize(static_cast<size_t>(pw.n_blocks) * Q6PanelScales::kVectors * 16);
  const __m512i low16 = _mm512_set1_epi32(0xFFFF), minus32 = _mm512_set1_epi16(-32);
  for (int64_t b = 0; b < pw.n_blocks; ++b) {
    const uint8_t* sc = pw.quants(panel, b) + PackedQ6K::kScales;
    __m512i dup[16];
    for (int j = 0; j < 16; ++j) {
      const __m512i x = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + 16 * j)));
      dup[j] = _mm512_or_si512(_mm512_slli_epi32(x, 16), _mm512_and_si512(x, low16));
      _mm512_storeu_si512(s->scale(b, j), dup[j]);
    }
    for (int l = 0; l < 8; ++l) {
      const __m512i pair = _mm512_mask_blend_epi16(0xAAAAAAAA, dup[2 * l], dup[2 * l + 1]);
      _mm512_storeu_si512(s->offset(b, l), _mm512_mullo_epi16(pair, minus32));
    }
  }
}

// Chunk k's 64 bytes of lane l (4 quants of each of the 16 rows, 0..63) from
// the lane's packed nibbles and top bits (packed_weight.h).
template <int k>
inline __m512i Q6Quants(const uint8_t* lane) {
  const __m512i nib = _mm512_loadu_si512(lane + 64 * (k % 4));
  const __m512i top = _mm512_loadu_si512(lane + PackedQ6K::kHigh + 64 * (k % 2));
  const __m512i low = k < 4 ? nib : _mm512_srli_epi16(nib, 4);
  // The top bits 2j, 2j+1 (j = k / 2) to bits 4, 5 of each byte.
  constexpr int j = k / 2;
  const __m512i high = j < 2 ? _mm512_slli_epi16(top, 4 - 2 * j) : j == 2 ? top : _mm512_srli_epi16(top, 2);
  // (low & 0x0F) | (high & 0x30)
  return _mm512_ternarylogic_epi32(_mm512_and_si512(high, _mm512_set1_epi8(0x30)), low,
                                   _mm512_set1_epi8(0x0F), 0xF8);
}

inline __m512i Bcast32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Lanes g*L .. g*L+L-1 of the panel rows times C activation rows: the float
// lane accumulators, out[c][l] (16 rows each).
template <int L, int C>
void Q6PanelLanes(const PackedWeight& pw, int64_t panel, const Q6PanelScales& s, const BlockQ8K* const* acts,
                  int g, __m512 (*out)[8]) {
  static_assert(L * C == 8 && (L == 8 || 4 % L == 0));
  __m512 acc[L][C];
  for (int i = 0; i < L; ++i)
    for (int c = 0; c < C; ++c) acc[i][c] = _mm512_setzero_ps();
  for (int64_t b = 0; b < pw.n_blocks; ++b) {
    const uint8_t* q = pw.quants(panel, b);
    __m512i isum[L][C];
    for (int i = 0; i < L; ++i) {
      const int l = g * L + i;
      const __m512i off = _mm512_loadu_si512(s.offset(b, l));
      for (int c = 0; c < C; ++c)
        isum[i][c] = _mm512_dpwssd_epi32(_mm512_setzero_si512(), off, Bcast32(acts[c][b].bsums + 2 * l));
    }
    auto chunk = [&]<int k>() {
      for (int i = 0; i < L; ++i) {
        const int l = g * L + i;
        // Lanes 0..3 take the chunk's first sub-block, 4..7 its second; a
        // group of up to four lanes lies in one half.
        const int half = L == 8 ? i / 4 : g * L / 4;
        const __m512i sc = _mm512_loadu_si512(s.scale(b, 2 * k + half));
        const __m512i wv = Q6Quants<k>(q + PackedQ6K::kLane * l);
        for (int c = 0; c < C; ++c) {
          const __m512i p = _mm512_maddubs_epi16(wv, Bcast32(acts[c][b].qs + 32 * k + 4 * l));
          isum[i][c] = _mm512_dpwssd_epi32(isum[i][c], sc, p);
        }
      }
    };
    [&]<int... k>(std::integer_sequence<int, k...>) { (chunk.template operator()<k>(), ...); }
    (std::make_integer_sequence<int, 8>());
    const __m512 dw = _mm512_loadu_ps(reinterpret_cast<const float*>(q + PackedQ6K::kD));
    for (int c = 0; c < C; ++c) {
      const __m512 d = _mm512_mul_ps(_mm512_set1_ps(acts[c][b].d), dw);
      for (int i = 0; i < L; ++i)
        acc[i][c] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum[i][c]), d, acc[i][c]);
    }
  }
  for (int i = 0; i < L; ++i)
    for (int c = 0; c < C; ++c) out[c][g * L + i] = acc[i][c];
}

// C activation rows (from act_row c0 on) times the panel: all 8 lanes, then
// the row kernel's sum of lanes into y.
template <int L, int C>
void Q6PanelTile(const PackedWeight& pw, int64_t panel, const Q6PanelScales& s, const uint8_t* act,
                 size_t act_stride, int64_t c0, float* y, int64_t ldy, int64_t p0, __mmask16 mask) {
  const BlockQ8K* acts[C];
  for (int c = 0; c < C; ++c) acts[c] = reinterpret_cast<const BlockQ8K*>(act + (c0 + c) * act_stride);
  __m512 lanes[C][8];
  for (int g = 0; g < 8 / L; ++g) Q6PanelLanes<L, C>(pw, panel, s, acts, g, lanes);
  for (int c = 0; c < C; ++c) {
    const __m512* v = lanes[c];
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[0], v[4]), _mm512_add_ps(v[2], v[6])),
                                     _mm512_add_ps(_mm512_add_ps(v[1], v[5]), _mm512_add_ps(v[3], v[7])));
    _mm512_mask_storeu_ps(y + (c0 + c) * ldy + p0, mask, sum);
  }
}

// Activation rows up to which MulRowsPackedQ6K asks for the next panel while
// it multiplies one: a prompt's many tiles take long enough on each panel
// (and want the cache for their activations).
constexpr int64_t kQ6PrefetchMaxRows = 16;

// Rows [r0, r1) (r0 a multiple of 16) of a Q6_K weight packed at load times
// m Q8K activation rows.
void MulRowsPackedQ6K(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                      int64_t ldy, int64_t r0, int64_t r1) {
  assert(w.packed->type == GgmlType::kQ6_K && r0 % kPackedPanelRows == 0);
  thread_local Q6PanelScales scales;
  for (int64_t p0 = r0; p0 < r1; p0 += kPackedPanelRows) {
    const int64_t panel = p0 / kPackedPanelRows;
    const int rows = static_cast<int>(r1 - p0 < kPackedPanelRows ? r1 - p0 : kPackedPanelRows);
    const auto mask = static_cast<__mmask16>((1u << rows) - 1);
    // The next panel of the range streams in while this one is multiplied:
    // its tiles walk the super-blocks lane by lane (eight passes for eight
    // activation rows), which the hardware prefetchers do not follow.
    if (m <= kQ6PrefetchMaxRows && p0 + kPackedPanelRows < r1) {
      const char* next = reinterpret_cast<const char*>(w.packed->panel(panel + 1));
      for (size_t off = 0; off < w.packed->panel_bytes; off += 64) _mm_prefetch(next + off, _MM_HINT_T0);
    }
    ExpandQ6Scales(*w.packed, panel, &scales);
    int64_t c0 = 0;
    for (; c0 + 8 <= m; c0 += 8)
      Q6PanelTile<1, 8>(*w.packed, panel, scales, act, act_stride, c0, y, ldy, p0, mask);
    if (m - c0 >= 4) {
      Q6PanelTile<2, 4>(*w.packed, panel, scales, act, act_stride, c0, y, ldy, p0, mask);
      c0 += 4;
    }
    if (m - c0 >= 2) {
      Q6PanelTile<4, 2>(*w.packed, panel, scales, act, act_stride, c0, y, ldy, p0, mask);
      c0 += 2;
    }
    if (m - c0 == 1) Q6PanelTile<8, 1>(*w.packed, panel, scales, act, act_stride, c0, y, ldy, p0, mask);
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
