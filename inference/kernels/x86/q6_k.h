// Q6_K weights on AVX2 and AVX-512 VNNI (packed at load on AVX-512:
// q6_k_avx512.h): DotTileQ6K, one weight row at a time (vec_dot), and the
// tiles below.
//
// Q6_K times Q8K activations for every batch size, in the float order of
// llama.cpp's x86 Q6_K dot product (which it uses for every batch size):
// per output eight int32 lanes per super-block, lane l = sum over the 32-value
// chunks of sc * (the 4 unsigned-quant products at positions 4l..4l+3 of the
// chunk) minus 32 * (bsum[2l]*sc[2l] + bsum[2l+1]*sc[2l+1]); then
// acc_l = fma(float(lane_l), d_a*d_w, acc_l) over the super-blocks and the
// lanes summed as ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)). Each output's steps do
// not depend on the tile, so row i of the product depends only on activation
// row i. From kQ6UnpackMinBatch activation rows on, weight rows are unpacked
// once per group of kQ6Rows rows and reused for all of them; fewer read the
// blocks directly. Included only by the per-instruction-set kernel
// files; internal linkage.
#pragma once

#include <immintrin.h>

#include <vector>

#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

// Q6_K: quants 0..63, signed 8-bit scales per 16 values, -32 offset through
// the bsums.
template <int C>
void DotTileQ6K(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(w_row);
  const BlockQ8K* a[C];
  float acc[C];
  for (int c = 0; c < C; ++c) {
    a[c] = reinterpret_cast<const BlockQ8K*>(acts[c]);
    acc[c] = 0;
  }
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const BlockQ6_K& blk = w[b];
    const __m256i scales16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.scales)));
    alignas(32) int16_t sc[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc), scales16);
    __m256i isum[C];
    for (int c = 0; c < C; ++c) isum[c] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      UnpackQ6KHalf(blk, h, q);
      for (int k = 0; k < 4; ++k) {
        // 32 values = sub-blocks 8h+2k and 8h+2k+1 (16 each).
        const int j = 8 * h + 2 * k;
        const __m256i s = _mm256_set_m128i(_mm_set1_epi16(sc[j + 1]), _mm_set1_epi16(sc[j]));
        for (int c = 0; c < C; ++c) {
          isum[c] = _mm256_add_epi32(isum[c], DotU8I8Scaled(q[k], LoadU(a[c][b].qs + 128 * h + 32 * k), s));
        }
      }
    }
    const float d = H2F(blk.d);
    for (int c = 0; c < C; ++c) {
      const BlockQ8K& ab = a[c][b];
      // One exact integer per super-block (the -32 offset cancels most of
      // the lane sums, so it is applied before rounding to float).
      const int32_t off = HsumI(_mm256_madd_epi16(LoadU(ab.bsums), scales16));
      acc[c] += ab.d * d * static_cast<float>(HsumI(isum[c]) - 32 * off);
    }
  }
  for (int c = 0; c < C; ++c) out[c] = acc[c];
}

constexpr int kQ6Rows = 4;

// kQ6Rows unpacked rows: quants 0..63 in value order, per super-block the 16
// scales as int16 and d.
struct Q6Rows {
  std::vector<uint8_t> q;       // [row][K]
  std::vector<int16_t> scales;  // [row][K/256][16]
  std::vector<float> d;         // [row][K/256]
};

inline void UnpackQ6Row(const BlockQ6_K* blk, int64_t nb, uint8_t* q, int16_t* scales, float* d) {
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_K& x = blk[b];
    d[b] = H2F(x.d);
    for (int j = 0; j < 16; ++j) scales[16 * b + j] = x.scales[j];
    for (int h = 0; h < 2; ++h) {
      __m256i v[4];
      UnpackQ6KHalf(x, h, v);
      for (int k = 0; k < 4; ++k)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 256 * b + 128 * h + 32 * k), v[k]);
    }
  }
}

// The eight lane integers of one super-block (see the top of the file): its
// eight 32-value chunks of quants and its 16 scales.
inline __m256i Q6Lanes(const __m256i q[8], const int16_t* scales, const BlockQ8K& a) {
  __m256i sumi = _mm256_setzero_si256();
  for (int k = 0; k < 8; ++k) {
    // int16 lanes 0..7 take scale 2k (values 0..15 of the chunk), 8..15 2k+1.
    const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(scales[2 * k + 1]), _mm_set1_epi16(scales[2 * k]));
    const __m256i p16 = _mm256_maddubs_epi16(q[k], LoadU(a.qs + 32 * k));
    sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(sc, p16));
  }
  const __m256i off = _mm256_madd_epi16(LoadU(a.bsums), LoadU(scales));
  return _mm256_sub_epi32(sumi, _mm256_slli_epi32(off, 5));
}

template <int C>
void Q6Tile(const Q6Rows& rows, int r, int64_t k, const uint8_t* const* acts, float* y, int64_t ldy) {
  const int64_t nb = k / kQKK;
  const uint8_t* q = rows.q.data() + r * k;
  const int16_t* scales = rows.scales.data() + r * nb * 16;
  const float* d = rows.d.data() + r * nb;
  __m256 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i chunks[8];
    for (int k = 0; k < 8; ++k) chunks[k] = LoadU(q + 256 * b + 32 * k);
    for (int c = 0; c < C; ++c) {
      const BlockQ8K& a = reinterpret_cast<const BlockQ8K*>(acts[c])[b];
      const __m256i lanes = Q6Lanes(chunks, scales + 16 * b, a);
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d[b]), _mm256_cvtepi32_ps(lanes), acc[c]);
    }
  }
  for (int c = 0; c < C; ++c) y[c * ldy] = Hsum(acc[c]);
}

// Q6Tile straight from the GGUF blocks of one weight row, for the few
// activation rows of decode, where unpacking the row to memory first (for
// Q6Tile to read back) cost more than the products: the same integers and
// float steps, so bitwise Q6Tile's results.
template <int C>
void Q6TileFromBlocks(const BlockQ6_K* row, int64_t nb, const uint8_t* const* acts, float* y, int64_t ldy) {
  __m256 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_K& x = row[b];
    __m256i chunks[8];
    UnpackQ6KHalf(x, 0, chunks);
    UnpackQ6KHalf(x, 1, chunks + 4);
    alignas(32) int16_t scales[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(scales),
                       _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales))));
    const float d = H2F(x.d);
    for (int c = 0; c < C; ++c) {
      const BlockQ8K& a = reinterpret_cast<const BlockQ8K*>(acts[c])[b];
      const __m256i lanes = Q6Lanes(chunks, scales, a);
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d), _mm256_cvtepi32_ps(lanes), acc[c]);
    }
  }
  for (int c = 0; c < C; ++c) y[c * ldy] = Hsum(acc[c]);
}

// From this many activation rows on, a weight row is unpacked once for all
// of them (Q6Tile); below, each product reads the blocks (Q6TileFromBlocks).
constexpr int64_t kQ6UnpackMinBatch = 4;

// Rows [r0, r1) of a Q6_K weight times m Q8K activation rows.
void MulRowsQ6K(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y, int64_t ldy,
                int64_t r0, int64_t r1) {
  const int64_t k = w.n_in, nb = k / kQKK;
  if (m <= 0) return;
  if (m < kQ6UnpackMinBatch) {
    using BlockTileFn = void (*)(const BlockQ6_K*, int64_t, const uint8_t* const*, float*, int64_t);
    static constexpr BlockTileFn kBlockTiles[3] = {Q6TileFromBlocks<1>, Q6TileFromBlocks<2>,
                                                   Q6TileFromBlocks<3>};
    const uint8_t* acts[3];
    for (int64_t c = 0; c < m; ++c) acts[c] = act + static_cast<size_t>(c) * act_stride;
    for (int64_t r = r0; r < r1; ++r) {
      kBlockTiles[m - 1](reinterpret_cast<const BlockQ6_K*>(w.data + static_cast<size_t>(r) * w.row_bytes),
                         nb, acts, y + r, ldy);
    }
    return;
  }
  thread_local Q6Rows rows;
  rows.q.resize(static_cast<size_t>(kQ6Rows * k));
  rows.scales.resize(static_cast<size_t>(kQ6Rows * nb * 16));
  rows.d.resize(static_cast<size_t>(kQ6Rows * nb));
  using TileFn = void (*)(const Q6Rows&, int, int64_t, const uint8_t* const*, float*, int64_t);
  static constexpr TileFn kTiles[4] = {Q6Tile<1>, Q6Tile<2>, Q6Tile<3>, Q6Tile<4>};
  for (int64_t p0 = r0; p0 < r1; p0 += kQ6Rows) {
    const int n = static_cast<int>(r1 - p0 < kQ6Rows ? r1 - p0 : kQ6Rows);
    for (int r = 0; r < n; ++r) {
      UnpackQ6Row(reinterpret_cast<const BlockQ6_K*>(w.data + static_cast<size_t>(p0 + r) * w.row_bytes), nb,
                  rows.q.data() + r * k, rows.scales.data() + r * nb * 16, rows.d.data() + r * nb);
    }
    for (int64_t c0 = 0; c0 < m; c0 += 4) {
      const int cols = static_cast<int>(m - c0 < 4 ? m - c0 : 4);
      const uint8_t* acts[4];
      for (int c = 0; c < cols; ++c) acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
      for (int r = 0; r < n; ++r) kTiles[cols - 1](rows, r, k, acts, y + c0 * ldy + p0 + r, ldy);
    }
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
