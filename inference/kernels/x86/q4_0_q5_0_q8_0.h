// Q4_0, Q5_0 and Q8_0 weights on AVX2 and AVX-512 VNNI (batches of 32 rows
// and more, and weights packed at load, on AVX-512: q4_0_q5_0_q8_0_avx512.h),
// and DotTileLegacy, the one-row kernel of every legacy type (Q4_1 and Q5_1
// included: vec_dot).
//
// Q4_0 / Q5_0 / Q8_0 times Q8A activations for every batch size, in the
// float order of llama.cpp's x86 kernels for these types (its vec_dot and its
// tiled sgemm agree): per output, eight float lanes, lane l accumulating over
// the blocks fma(float(sum of the 4 signed products at positions 4l..4l+3),
// d_w*d_a, lane), then the lanes summed as ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
// Each output's steps do not depend on the tile it is computed in, so row i
// of the product depends only on activation row i, for any m. Tiles of R
// weight rows x C activation rows share the unpacked weights and the loaded
// activations. Included only by the per-instruction-set kernel files
// (VNNI dot products when compiled with AVX-512 VNNI); internal linkage.
#pragma once

#include <immintrin.h>

#include <cassert>
#include <vector>

#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

// Legacy types: per block, dot of the unsigned quants with each activation row,
// scaled by d_w*d_a; the offset (Q4_0/Q5_0) or min (Q4_1/Q5_1) term uses the
// activation block sums.
template <GgmlType kType, int C>
void DotTileLegacy(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out) {
  __m256 acc[C];
  float corr[C];
  for (int c = 0; c < C; ++c) {
    acc[c] = _mm256_setzero_ps();
    corr[c] = 0;
  }
  const BlockQ8A* a[C];
  for (int c = 0; c < C; ++c) a[c] = reinterpret_cast<const BlockQ8A*>(acts[c]);
  for (int64_t b = 0; b < n / kQK; ++b) {
    __m256i q;
    float dw, mw = 0;
    if constexpr (kType == GgmlType::kQ4_0) {
      const auto& blk = reinterpret_cast<const BlockQ4_0*>(w_row)[b];
      q = UnpackNibbles32(blk.qs);
      dw = H2F(blk.d);
    } else if constexpr (kType == GgmlType::kQ4_1) {
      const auto& blk = reinterpret_cast<const BlockQ4_1*>(w_row)[b];
      q = UnpackNibbles32(blk.qs);
      dw = H2F(blk.d);
      mw = H2F(blk.m);
    } else if constexpr (kType == GgmlType::kQ5_0) {
      const auto& blk = reinterpret_cast<const BlockQ5_0*>(w_row)[b];
      q = UnpackQ5(blk);
      dw = H2F(blk.d);
    } else if constexpr (kType == GgmlType::kQ5_1) {
      const auto& blk = reinterpret_cast<const BlockQ5_1*>(w_row)[b];
      q = UnpackQ5(blk);
      dw = H2F(blk.d);
      mw = H2F(blk.m);
    } else {  // Q8_0: signed weights
      const auto& blk = reinterpret_cast<const BlockQ8_0*>(w_row)[b];
      q = LoadU(blk.qs);
      dw = H2F(blk.d);
#if RAGD_X86_VNNI
      q = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));  // w + 128 as u8
#endif
    }
    for (int c = 0; c < C; ++c) {
      const BlockQ8A& ab = a[c][b];
      __m256i av = LoadU(ab.qs);
      __m256i isum;
      if constexpr (kType == GgmlType::kQ8_0 && !RAGD_X86_VNNI) {
        isum = DotU8I8(_mm256_setzero_si256(), _mm256_sign_epi8(q, q), _mm256_sign_epi8(av, q));
      } else {
        isum = DotU8I8(_mm256_setzero_si256(), q, av);
      }
      const float ds = dw * ab.d;
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(ds), acc[c]);
      if constexpr (kType == GgmlType::kQ4_1 || kType == GgmlType::kQ5_1) {
        corr[c] += mw * ab.d * static_cast<float>(ab.sum);
      } else if constexpr (kType != GgmlType::kQ8_0 || RAGD_X86_VNNI) {
        corr[c] += ds * static_cast<float>(ab.sum);
      }
    }
  }
  constexpr float kOffset = kType == GgmlType::kQ4_0   ? -8.0f
                            : kType == GgmlType::kQ5_0 ? -16.0f
                            : kType == GgmlType::kQ8_0 ? -128.0f
                                                       : 1.0f;  // Q4_1/Q5_1: + min term
  for (int c = 0; c < C; ++c) out[c] = Hsum(acc[c]) + kOffset * corr[c];
}

// The int32 -> float conversion of a lane sum s can be done as
// bits(0x4B400000 + s) - 1.5*2^23: exact for |s| < 2^22 (a lane sums 4
// products of |q| <= 128 and |a| <= 127), one subtraction on either vector
// port instead of a conversion on one. The 0x4B400000 rides in with the lane
// offsets (LaneOffsets' bias).
constexpr int32_t kMagicBits = 0x4B400000;  // 1.5 * 2^23 as float bits
constexpr float kMagic = 12582912.0f;       // 1.5 * 2^23

constexpr bool IsOffsetLegacy(GgmlType t) {
  return t == GgmlType::kQ4_0 || t == GgmlType::kQ5_0 || t == GgmlType::kQ8_0;
}

// One weight block as 32 quants in value order plus its scale. Q4_0/Q5_0:
// unsigned (q + 8 / q + 16); Q8_0: unsigned q + 128 with VNNI, else signed.
template <GgmlType kType>
inline __m256i LoadLegacyBlock(const uint8_t* row, int64_t b, float* d) {
  if constexpr (kType == GgmlType::kQ4_0) {
    const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
    *d = H2F(blk.d);
    return UnpackNibbles32(blk.qs);
  } else if constexpr (kType == GgmlType::kQ5_0) {
    const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
    *d = H2F(blk.d);
    return UnpackQ5(blk);
  } else {
    const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
    *d = H2F(blk.d);
#if RAGD_X86_VNNI
    return _mm256_xor_si256(LoadU(blk.qs), _mm256_set1_epi8(static_cast<char>(0x80)));  // w + 128 as u8
#else
    return LoadU(blk.qs);
#endif
  }
}

// Per-lane offset of the unsigned forms: -offset * (sum of the 4 activation
// quants of the lane). Q8_0: offset 128 with VNNI (weights used as w + 128),
// none without (its quants are used signed).
template <GgmlType kType>
inline __m256i LaneOffset(__m256i a) {
  if constexpr (kType == GgmlType::kQ8_0) {
#if RAGD_X86_VNNI  // used as (w + 128): offset 128
    const __m256i sums =
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), a), _mm256_set1_epi16(1));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sums, 7));
#else
    (void)a;
    return _mm256_setzero_si256();
#endif
  } else {
    constexpr int kShift = kType == GgmlType::kQ4_0 ? 3 : 4;  // offset 8 or 16
    const __m256i sums =
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), a), _mm256_set1_epi16(1));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sums, kShift));
  }
}

// Whether a type's lane sums take a lane offset: not Q8_0 without VNNI,
// whose LaneOffset is zero.
template <GgmlType kType>
constexpr bool kHasLaneOffset = kType != GgmlType::kQ8_0 || RAGD_X86_VNNI;

// Exact signed lane sums: lane l = sum over positions 4l..4l+3 of q*a (plus
// `off` where kHasLaneOffset).
template <GgmlType kType>
inline __m256i SignedLaneDot(__m256i off, __m256i w, __m256i a) {
  if constexpr (kType == GgmlType::kQ8_0) {
#if RAGD_X86_VNNI
    return _mm256_dpbusd_epi32(off, w, a);  // w already + 128
#else
    // |w| * (a with the sign of w): pair sums stay within int16.
    (void)off;
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w)),
                             _mm256_set1_epi16(1));
#endif
  } else {
    return DotU8I8(off, w, a);  // quants <= 31: no int16 saturation
  }
}

// With VNNI the tiles below take their lane sums to floats by the kMagic
// subtraction (the lane offsets carry kMagicBits); without, by conversion.
constexpr int32_t kLaneBias = RAGD_X86_VNNI ? kMagicBits : 0;
inline __m256 LaneSumsToFloat(__m256i s) {
#if RAGD_X86_VNNI
  return _mm256_sub_ps(_mm256_castsi256_ps(s), _mm256_set1_ps(kMagic));
#else
  return _mm256_cvtepi32_ps(s);
#endif
}

// The lane offsets (LaneOffset, plus `bias`) of every block of m activation
// rows, once per product: offs[(c * nb + b) * 8 + lane].
template <GgmlType kType>
void LaneOffsets(const uint8_t* act, size_t act_stride, int64_t m, int64_t nb, int32_t bias,
                 std::vector<int32_t>* offs) {
  if (!kHasLaneOffset<kType>) return;
  offs->resize(static_cast<size_t>(8 * m * nb));
  for (int64_t c = 0; c < m; ++c) {
    const auto* a = reinterpret_cast<const BlockQ8A*>(act + static_cast<size_t>(c) * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(offs->data() + 8 * (c * nb + b)),
                          _mm256_add_epi32(LaneOffset<kType>(LoadU(a[b].qs)), _mm256_set1_epi32(bias)));
    }
  }
}

// y[c][r] for R weight rows starting at w_rows and C activation rows (with
// their lane offsets, 8 per block).
template <GgmlType kType, int R, int C>
void LegacyTile(int64_t n, const uint8_t* w_rows, size_t row_bytes, const uint8_t* const* acts,
                const int32_t* const* offs, float* y, int64_t ldy) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < n / kQK; ++b) {
    __m256i wq[R];
    float dw[R];
    for (int r = 0; r < R; ++r) wq[r] = LoadLegacyBlock<kType>(w_rows + r * row_bytes, b, &dw[r]);
    for (int c = 0; c < C; ++c) {
      const BlockQ8A& ab = reinterpret_cast<const BlockQ8A*>(acts[c])[b];
      const __m256i a = LoadU(ab.qs);
      const __m256i off = kHasLaneOffset<kType> ? LoadU(offs[c] + 8 * b) : _mm256_setzero_si256();
      const __m256 da = _mm256_set1_ps(ab.d);
      for (int r = 0; r < R; ++r) {
        const __m256i isum = SignedLaneDot<kType>(off, wq[r], a);
        acc[r][c] =
            _mm256_fmadd_ps(LaneSumsToFloat(isum), _mm256_mul_ps(_mm256_set1_ps(dw[r]), da), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) y[c * ldy + r] = Hsum(acc[r][c]);
  }
}

// The bytes of weight rows [r, r + n) of w, clipped to the matrix (empty
// past its end).
struct RowBytesRange {
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
};
inline RowBytesRange RowsOf(const WeightView& w, int64_t r, int64_t n) {
  if (r >= w.n_out) return {};
  const int64_t end = r + n < w.n_out ? r + n : w.n_out;
  return {w.data + static_cast<size_t>(r) * w.row_bytes, w.data + static_cast<size_t>(end) * w.row_bytes};
}

// Asks for slice `part` of `parts` of weight rows [r, r + n) of w to be
// brought into the cache at once (rows past the matrix are skipped): the
// single-row loop asks for a row ahead, the panel loop for a slice of the
// panel after next per tile.
inline void PrefetchRows(const WeightView& w, int64_t r, int64_t n, int64_t part = 0, int64_t parts = 1) {
  const RowBytesRange rows = RowsOf(w, r, n);
  const int64_t lines = (rows.end - rows.begin + 63) / 64;
  for (int64_t l = lines * part / parts; l < lines * (part + 1) / parts; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(rows.begin + 64 * l), _MM_HINT_T0);
  }
}

// A byte range to bring into the cache a few lines at a time, one call of
// Next() per iteration of a compute loop of `iterations`: the loads then
// overlap the compute instead of stalling it in a burst of misses.
class SpreadPrefetch {
 public:
  SpreadPrefetch() = default;
  SpreadPrefetch(const uint8_t* begin, const uint8_t* end, int64_t iterations)
      : p_(reinterpret_cast<uintptr_t>(begin) & ~uintptr_t{63}), end_(reinterpret_cast<uintptr_t>(end)) {
    const int64_t lines = p_ < end_ ? static_cast<int64_t>((end_ - p_ + 63) / 64) : 0;
    step_ = iterations > 0 ? 64 * ((lines + iterations - 1) / iterations) : 0;
  }
  void Next() {
    const uintptr_t stop = p_ + step_ < end_ ? p_ + step_ : end_;
    for (; p_ < stop; p_ += 64) _mm_prefetch(reinterpret_cast<const char*>(p_), _MM_HINT_T0);
  }

 private:
  uintptr_t p_ = 0, end_ = 0, step_ = 0;
};

// Weight rows [r, r + n) of w (clipped to the matrix) spread over `iterations`.
inline SpreadPrefetch RowsAhead(const WeightView& w, int64_t r, int64_t n, int64_t iterations) {
  const RowBytesRange rows = RowsOf(w, r, n);
  return {rows.begin, rows.end, iterations};
}

#if RAGD_X86_VNNI
// Batches: a group of 4 weight rows unpacked once into 512-bit pairs (lanes
// 0..7 row 2p, 8..15 row 2p+1), then tiles of 4 rows x up to 8 activation
// rows. Every lane takes the same steps as in LegacyTile.
struct LegacyPairs {
  std::vector<uint8_t> wq;  // [block][pair] 64 bytes
  std::vector<float> dw;    // [block][pair] 16 floats
};

// P pairs (2P weight rows, unpacked in lp with kPairs pairs per block) times
// C activation rows.
template <int P, int C>
void LegacyPairsTile(const LegacyPairs& lp, int64_t nb, const uint8_t* const* acts,
                     const int32_t* const* offs, float* y, int64_t ldy, SpreadPrefetch pf) {
  __m512 acc[P][C];
  for (int p = 0; p < P; ++p) {
    for (int c = 0; c < C; ++c) acc[p][c] = _mm512_setzero_ps();
  }
  const __m512 magic = _mm512_set1_ps(kMagic);
  for (int64_t b = 0; b < nb; ++b) {
    pf.Next();
    __m512i wv[P];
    __m512 dv[P];
    for (int p = 0; p < P; ++p) {
      wv[p] = _mm512_loadu_si512(lp.wq.data() + 64 * (P * b + p));
      dv[p] = _mm512_loadu_ps(lp.dw.data() + 16 * (P * b + p));
    }
    for (int c = 0; c < C; ++c) {
      const BlockQ8A& ab = reinterpret_cast<const BlockQ8A*>(acts[c])[b];
      const __m512i a2 = _mm512_broadcast_i64x4(LoadU(ab.qs));
      const __m512i off2 = _mm512_broadcast_i64x4(LoadU(offs[c] + 8 * b));
      const __m512 da = _mm512_set1_ps(ab.d);
      for (int p = 0; p < P; ++p) {
        const __m512 lanes = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(off2, wv[p], a2)), magic);
        acc[p][c] = _mm512_fmadd_ps(lanes, _mm512_mul_ps(dv[p], da), acc[p][c]);
      }
    }
  }
  for (int p = 0; p < P; ++p) {
    for (int c = 0; c < C; ++c) {
      y[c * ldy + 2 * p] = Hsum(_mm512_maskz_extractf32x8_ps(0xFF, acc[p][c], 0));
      y[c * ldy + 2 * p + 1] = Hsum(_mm512_maskz_extractf32x8_ps(0xFF, acc[p][c], 1));
    }
  }
}

// Unpacks rows r .. r+2P-1 as P pairs per block into lp.
template <GgmlType kType, int P>
void UnpackPairs(const WeightView& w, int64_t r, int64_t nb, LegacyPairs* lp) {
  lp->wq.resize(static_cast<size_t>(64 * P * nb));
  lp->dw.resize(static_cast<size_t>(16 * P * nb));
  for (int64_t b = 0; b < nb; ++b) {
    for (int p = 0; p < P; ++p) {
      float d0, d1;
      const uint8_t* row0 = w.data + static_cast<size_t>(r + 2 * p) * w.row_bytes;
      const __m256i q0 = LoadLegacyBlock<kType>(row0, b, &d0);
      const __m256i q1 = LoadLegacyBlock<kType>(row0 + w.row_bytes, b, &d1);
      _mm512_storeu_si512(lp->wq.data() + 64 * (P * b + p),
                          _mm512_inserti64x4(_mm512_zextsi256_si512(q0), q1, 1));
      _mm512_storeu_ps(lp->dw.data() + 16 * (P * b + p),
                       _mm512_insertf32x8(_mm512_zextps256_ps512(_mm256_set1_ps(d0)), _mm256_set1_ps(d1), 1));
    }
  }
}

// Rows [r0, r1) in groups of 8 then 4 (returns the first row not done).
template <GgmlType kType>
int64_t LegacyRowsBatched(const WeightView& w, const uint8_t* act, size_t act_stride,
                          const int32_t* lane_offs, int64_t m, float* y, int64_t ldy, int64_t r0,
                          int64_t r1) {
  thread_local LegacyPairs lp;
  const int64_t nb = w.n_in / kQK;
  using TileFn = void (*)(const LegacyPairs&, int64_t, const uint8_t* const*, const int32_t* const*, float*,
                          int64_t, SpreadPrefetch);
  // 8 rows x 4 activation rows, or 4 rows x 8: 16 accumulators either way.
  static constexpr TileFn kTiles8[4] = {LegacyPairsTile<4, 1>, LegacyPairsTile<4, 2>, LegacyPairsTile<4, 3>,
                                        LegacyPairsTile<4, 4>};
  static constexpr TileFn kTiles4[8] = {LegacyPairsTile<2, 1>, LegacyPairsTile<2, 2>, LegacyPairsTile<2, 3>,
                                        LegacyPairsTile<2, 4>, LegacyPairsTile<2, 5>, LegacyPairsTile<2, 6>,
                                        LegacyPairsTile<2, 7>, LegacyPairsTile<2, 8>};
  // While a group's tiles run, the group two ahead streams in, spread over
  // every block step of the tiles.
  auto run = [&](const TileFn* tiles, int max_cols, int64_t r, int64_t rows) {
    const int64_t n_tiles = (m + max_cols - 1) / max_cols;
    for (int64_t c0 = 0, t = 0; c0 < m; c0 += max_cols, ++t) {
      const int cols = static_cast<int>(m - c0 < max_cols ? m - c0 : max_cols);
      const uint8_t* acts[8];
      const int32_t* offs[8];
      for (int c = 0; c < cols; ++c) {
        acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
        offs[c] = lane_offs + 8 * (c0 + c) * nb;
      }
      const int64_t ahead = r + 2 * rows;
      const int64_t from = ahead + rows * t / n_tiles, to = ahead + rows * (t + 1) / n_tiles;
      tiles[cols - 1](lp, nb, acts, offs, y + c0 * ldy + r, ldy, RowsAhead(w, from, to - from, nb));
    }
  };
  int64_t r = r0;
  for (; r + 8 <= r1; r += 8) {
    UnpackPairs<kType, 4>(w, r, nb, &lp);
    run(kTiles8, 4, r, 8);
  }
  for (; r + 4 <= r1; r += 4) {
    UnpackPairs<kType, 2>(w, r, nb, &lp);
    run(kTiles4, 8, r, 4);
  }
  return r;
}
#endif

// Weight row r times the m activation rows, in tiles of up to 4 of them.
template <GgmlType kType>
void LegacyRow(const WeightView& w, const uint8_t* act, size_t act_stride, const int32_t* lane_offs,
               int64_t m, float* y, int64_t ldy, int64_t r) {
  constexpr int kCols = 4;
  using TileFn = void (*)(int64_t, const uint8_t*, size_t, const uint8_t* const*, const int32_t* const*,
                          float*, int64_t);
  const int64_t nb = w.n_in / kQK;
  static constexpr TileFn kTiles[kCols] = {LegacyTile<kType, 1, 1>, LegacyTile<kType, 1, 2>,
                                           LegacyTile<kType, 1, 3>, LegacyTile<kType, 1, 4>};
  for (int64_t c0 = 0; c0 < m; c0 += kCols) {
    const int cols = static_cast<int>(m - c0 < kCols ? m - c0 : kCols);
    const uint8_t* acts[4];
    const int32_t* offs[4];
    for (int c = 0; c < cols; ++c) {
      acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
      offs[c] = kHasLaneOffset<kType> ? lane_offs + 8 * (c0 + c) * nb : nullptr;
    }
    kTiles[cols - 1](w.n_in, w.data + static_cast<size_t>(r) * w.row_bytes, w.row_bytes, acts, offs,
                     y + c0 * ldy + r, ldy);
  }
}

template <GgmlType kType>
void MulRowsLegacyT(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                    int64_t ldy, int64_t r0, int64_t r1) {
  thread_local std::vector<int32_t> offs;
  LaneOffsets<kType>(act, act_stride, m, w.n_in / kQK, kLaneBias, &offs);
  int64_t r = r0;
#if RAGD_X86_VNNI
  // Every batch size in groups of rows, m = 1 too: its weight rows stream in
  // faster spread over the groups' compute than a row at a time.
  r = LegacyRowsBatched<kType>(w, act, act_stride, offs.data(), m, y, ldy, r0, r1);
#endif
  // The rows left one at a time (one memory stream); without VNNI every row,
  // whatever m, in tiles of 4 activation rows: tiles of several weight rows
  // keep their accumulators on the stack with 16 ymm registers, and were
  // slower at every m.
  for (; r < r1; ++r) {
    PrefetchRows(w, r + 16, 1);
    LegacyRow<kType>(w, act, act_stride, offs.data(), m, y, ldy, r);
  }
}

// Rows [r0, r1) of a Q4_0 / Q5_0 / Q8_0 weight times m Q8A activation rows.
void MulRowsLegacy(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                   int64_t ldy, int64_t r0, int64_t r1) {
  switch (w.type) {
    case GgmlType::kQ4_0:
      return MulRowsLegacyT<GgmlType::kQ4_0>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ5_0:
      return MulRowsLegacyT<GgmlType::kQ5_0>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ8_0:
      return MulRowsLegacyT<GgmlType::kQ8_0>(w, act, act_stride, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsLegacy: not an offset legacy type");
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
