// Q4_0 / Q5_0 / Q8_0 batches for AVX-512 VNNI, in llama.cpp's lane order
// (q4_0_q5_0_q8_0.h): 16 weight rows make a panel in which one vpdpbusd
// gives a lane of one block for 16 rows (Repack, panel_avx512.h: dword i = 8 *
// block + lane of row r at (i*16 + r)*4; or packed at load, packed_weight.h),
// read by LegacyLanePairTile with each pair of lanes side by side (two rows'
// lanes per vector half), so that one 64-bit broadcast serves two lanes of
// an activation row; the scale product d_w*d_a is one multiply per block for
// 8 rows. Q8_0 panels packed at load are read where they lie and paired as
// loaded, as are repacked ones; packed Q5_0 ones are unpacked once per panel
// and product straight into pairs. Each output takes exactly LegacyTile's
// float steps, so rows are bitwise those of the one-row kernels. Block sums
// (the tied output's order) have their own tile, BlockSumPanelTile. Included
// only by kernels_avx512.cpp; internal linkage. The lane sums become floats
// by the kMagic subtraction (q4_0_q5_0_q8_0.h).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>
#include <vector>

#include "inference/kernels/packed_weight.h"
#include "inference/kernels/x86/panel_avx512.h"
#include "inference/kernels/x86/q4_0_q5_0_q8_0.h"

namespace ragd::inference::kernels {
namespace {

// f.template operator()<k>() for k = 0 .. N-1 in turn, k a constant: loops
// over arrays of vector accumulators written so that GCC keeps each element
// in a register (with plain loops it kept the array on the stack, a store
// and a load of every accumulator per block).
template <int N, typename F>
inline void ForEachConst(F&& f) {
  [&]<int... k>(std::integer_sequence<int, k...>) { (f.template operator()<k>(), ...); }
  (std::make_integer_sequence<int, N>());
}

// A block's 16 row scales (d[r]) as LegacyLanePairTile reads them: out[0 ..
// 31], each row's scale in both dwords of its pair.
inline void StorePairScales(__m512 d, float* out) {
  _mm512_storeu_ps(out, _mm512_unpacklo_ps(d, d));
  _mm512_storeu_ps(out + 16, _mm512_unpackhi_ps(d, d));
}

// y[c*ldy + lane r] for C activation rows (offs: their lane offsets plus
// kMagicBits, 8 per block) and the 16 weight rows of a panel (store_mask: the
// rows that exist), each output the steps of LegacyTile: per lane l of each
// block fma(float(lane sum), d_w*d_a, acc_l), the lanes combined as
// ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)). Block b's quants at q + 512*b hold,
// for each pair of lanes (2p, 2p+1), two vectors: rows {0,1,4,5,8,9,12,13}
// then {2,3,6,7,10,11,14,15}, dword 2j + i holding lane 2p + i of the half's
// row j (UnpackPackedQ5's form); or, with kInterleave, the panel layout
// (lane l's 16 rows in one vector at 64*l: a packed Q8_0 panel or Repack's),
// each pair interleaved as it is loaded. Its scales at pair_scale + 32*b:
// two vectors with each row's d_w in both dwords of its pair (StorePairScales).
// One 64-bit broadcast then brings the activation quads (and another the
// lane offsets) of two lanes: 1.5 loads a lane step for two activation rows
// where a tile of one lane per vector needs 2.5, and the loads bound these
// tiles. pf->Next(), when pf is set, runs once per block.
template <int C, bool kInterleave>
void LegacyLanePairTile(const uint8_t* q, const float* pair_scale, int64_t nb, const uint8_t* const* acts,
                        const int32_t* const* offs, float* y, int64_t ldy, __mmask16 store_mask,
                        SpreadPrefetch* pf) {
  __m512 acc[C][4][2];
  ForEachConst<C>(
      [&]<int c>() { ForEachConst<4>([&]<int p>() { acc[c][p][0] = acc[c][p][1] = _mm512_setzero_ps(); }); });
  const __m512 magic = _mm512_set1_ps(kMagic);
  for (int64_t b = 0; b < nb; ++b) {
    if (pf != nullptr) pf->Next();
    const uint8_t* wq = q + b * 8 * 64;
    const __m512 s0 = _mm512_loadu_ps(pair_scale + 32 * b), s1 = _mm512_loadu_ps(pair_scale + 32 * b + 16);
    __m512 d[C][2];
    const int8_t* aq[C];
    ForEachConst<C>([&]<int c>() {
      const BlockQ8A& ab = reinterpret_cast<const BlockQ8A*>(acts[c])[b];
      const __m512 da = _mm512_set1_ps(ab.d);
      d[c][0] = _mm512_mul_ps(s0, da);
      d[c][1] = _mm512_mul_ps(s1, da);
      aq[c] = ab.qs;
    });
    ForEachConst<4>([&]<int p>() {
      __m512i w0 = _mm512_loadu_si512(wq + 128 * p), w1 = _mm512_loadu_si512(wq + 128 * p + 64);
      if constexpr (kInterleave) {
        const __m512i lane0 = w0;
        w0 = _mm512_unpacklo_epi32(lane0, w1);
        w1 = _mm512_unpackhi_epi32(lane0, w1);
      }
      ForEachConst<C>([&]<int c>() {
        int64_t a8, o8;
        std::memcpy(&a8, aq[c] + 8 * p, 8);
        std::memcpy(&o8, offs[c] + 8 * b + 2 * p, 8);
        const __m512i a = _mm512_set1_epi64(a8), o = _mm512_set1_epi64(o8);
        acc[c][p][0] = _mm512_fmadd_ps(
            _mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(o, w0, a)), magic), d[c][0], acc[c][p][0]);
        acc[c][p][1] = _mm512_fmadd_ps(
            _mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(o, w1, a)), magic), d[c][1], acc[c][p][1]);
      });
    });
  }
  // Row r's sum is dword 4*(r/4) + 2*(r%2) of half (r/2)%2.
  const __m512i rows = _mm512_setr_epi32(0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30);
  ForEachConst<C>([&]<int c>() {
    __m512 u[2];
    ForEachConst<2>([&]<int h>() {
      // Even dwords (l0+l4)+(l2+l6), odd (l1+l5)+(l3+l7); then even + odd.
      const __m512 t =
          _mm512_add_ps(_mm512_add_ps(acc[c][0][h], acc[c][2][h]), _mm512_add_ps(acc[c][1][h], acc[c][3][h]));
      u[h] = _mm512_add_ps(t, _mm512_shuffle_ps(t, t, 0xB1));
    });
    _mm512_mask_storeu_ps(y + c * ldy, store_mask, _mm512_permutex2var_ps(u[0], rows, u[1]));
  });
}

// SumOrder::kBlockSums for P adjacent Q8_0 panels (16 weight rows each,
// panel k's quants at q + k * panel_stride, its scales at scale + k * 16 * nb,
// its outputs at y + 16 * k) and C activation rows: per output, one float sum
// over the blocks of fma(float(the block's 32 signed products), d_w*d_a,
// sum). The eight vpdpbusd of a block add into int32 lanes (one per weight
// row) started at kMagicBits - 128 * (sum of the activation block), which
// removes the +128 of the packed quants, so that the kMagic subtraction gives
// the signed block sum as a float (|sum| <= 32*128*127 < 2^22: exact).
// Integer sums are exact, so one panel with few rows splits the eight into
// two chains (latency) for free. Two panels share each activation broadcast:
// a vpdpbusd then needs 1.5 loads instead of 2, which is what bounded the
// one-panel tile (hot in L1). The
// empty asm statements keep the weight and activation vectors in registers:
// without them GCC folds each use back into a load. store_mask: the rows of
// the last panel that exist.
template <int P, int C>
void BlockSumPanelTile(const uint8_t* q, size_t panel_stride, const float* scale, int64_t nb,
                       const BlockQ8A* const* acts, float* y, int64_t ldy, __mmask16 store_mask,
                       SpreadPrefetch* pf) {
  constexpr int kChains = P == 1 && C <= 4 ? 2 : 1;
  __m512 acc[P][C];
  for (int k = 0; k < P; ++k)
    for (int c = 0; c < C; ++c) acc[k][c] = _mm512_setzero_ps();
  const __m512 magic = _mm512_set1_ps(kMagic);
  for (int64_t b = 0; b < nb; ++b) {
    if (pf != nullptr) pf->Next();
    __m512i s[P][C][kChains];
    for (int c = 0; c < C; ++c) {
      const __m512i start = _mm512_set1_epi32(kMagicBits - 128 * acts[c][b].sum);
      for (int k = 0; k < P; ++k) {
        s[k][c][0] = start;
        for (int h = 1; h < kChains; ++h) s[k][c][h] = _mm512_setzero_si512();
      }
    }
    for (int l = 0; l < 8; ++l) {
      __m512i wv[P];
      for (int k = 0; k < P; ++k) {
        wv[k] = _mm512_loadu_si512(q + k * panel_stride + b * 8 * 64 + 64 * l);
        if constexpr (P > 1) asm("" : "+v"(wv[k]));
      }
      for (int c = 0; c < C; ++c) {
        int32_t a4;
        std::memcpy(&a4, acts[c][b].qs + 4 * l, 4);
        __m512i av = _mm512_set1_epi32(a4);
        if constexpr (P > 1) asm("" : "+v"(av));
        for (int k = 0; k < P; ++k)
          s[k][c][l % kChains] = _mm512_dpbusd_epi32(s[k][c][l % kChains], wv[k], av);
      }
    }
    for (int k = 0; k < P; ++k) {
      const __m512 dw = _mm512_loadu_ps(scale + (k * nb + b) * kPanelRows);
      for (int c = 0; c < C; ++c) {
        __m512i sum = s[k][c][0];
        for (int h = 1; h < kChains; ++h) sum = _mm512_add_epi32(sum, s[k][c][h]);
        const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(acts[c][b].d));
        acc[k][c] = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_castsi512_ps(sum), magic), d, acc[k][c]);
      }
    }
  }
  for (int k = 0; k < P; ++k) {
    const __mmask16 mask = k + 1 == P ? store_mask : static_cast<__mmask16>(0xFFFF);
    for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + c * ldy + k * kPanelRows, mask, acc[k][c]);
  }
}

// Activation rows per block-sum tile: of one panel, an accumulator and a
// block sum each fill the registers at 8; of two panels, at 5.
constexpr int kBlockSumCols = 8;
constexpr int kBlockSumPairCols = 5;
// Two panels per tile from this many rows on. With fewer the product waits
// on memory more than on the loads that pairs save, and pairs (two streams,
// more tiles) ran slower.
constexpr int64_t kBlockSumPairMinRows = 12;

// Two activation rows per tile: 8 accumulators each fill the registers.
constexpr int kLegacyPanelCols = 2;

// The activation rows and lane offsets of tile t (kLegacyPanelCols rows from
// t * kLegacyPanelCols); returns how many rows it has.
inline int PanelTileRows(const uint8_t* act, size_t act_stride, const int32_t* offs, int64_t m, int64_t nb,
                         int64_t t, const uint8_t** acts, const int32_t** o) {
  const int64_t c0 = t * kLegacyPanelCols;
  const int cols = static_cast<int>(m - c0 < kLegacyPanelCols ? m - c0 : kLegacyPanelCols);
  for (int c = 0; c < cols; ++c) {
    acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
    o[c] = offs + 8 * (c0 + c) * nb;
  }
  return cols;
}

template <GgmlType kType>
void MulRowsLegacyPanelT(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                         int64_t ldy, int64_t r0, int64_t r1) {
  thread_local Panel panel;
  thread_local std::vector<int32_t> offs;
  thread_local std::vector<float> pair_scales;
  const int64_t nb = w.n_in / kQK;
  LaneOffsets<kType>(act, act_stride, m, nb, kMagicBits, &offs);
  pair_scales.resize(static_cast<size_t>(32 * nb));
  using TileFn = void (*)(const uint8_t*, const float*, int64_t, const uint8_t* const*, const int32_t* const*,
                          float*, int64_t, __mmask16, SpreadPrefetch*);
  static constexpr TileFn kTiles[kLegacyPanelCols] = {LegacyLanePairTile<1, true>,
                                                      LegacyLanePairTile<2, true>};
  const int64_t n_tiles = (m + kLegacyPanelCols - 1) / kLegacyPanelCols;
  for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows) {
    const int rows = static_cast<int>(r1 - p0 < kPanelRows ? r1 - p0 : kPanelRows);
    Repack<kType>(w, p0, rows, &panel);
    for (int64_t b = 0; b < nb; ++b)
      StorePairScales(_mm512_loadu_ps(panel.scale.data() + kPanelRows * b), pair_scales.data() + 32 * b);
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    for (int64_t t = 0; t < n_tiles; ++t) {
      PrefetchRows(w, p0 + 2 * kPanelRows, kPanelRows, t, n_tiles);  // the panel after next
      const uint8_t* acts[kLegacyPanelCols];
      const int32_t* o[kLegacyPanelCols];
      const int cols = PanelTileRows(act, act_stride, offs.data(), m, nb, t, acts, o);
      kTiles[cols - 1](panel.q.data(), pair_scales.data(), nb, acts, o, y + t * kLegacyPanelCols * ldy + p0,
                       ldy, mask, nullptr);
    }
  }
}

// A packed Q5_0 block (packed_weight.h) as the 64 unsigned quants per lane
// pair LegacyLanePairTile reads: nibbles split and masked, the fifth bits
// added where their mask bits are set (the 8 lane vectors of the 16-row
// panel, dword r row r's lane l), then each pair of lanes interleaved by
// dword, 128 bits at a time.
inline void UnpackPackedQ5(const uint8_t* src, uint8_t* dst) {
  const __m512i low4 = _mm512_set1_epi8(15), five = _mm512_set1_epi8(16);
  __mmask64 fifth[8];
  std::memcpy(fifth, src + 256, sizeof(fifth));
  __m512i lane[8];
  for (int k = 0; k < 4; ++k) {
    const __m512i n = _mm512_loadu_si512(src + 64 * k);
    const __m512i lo = _mm512_and_si512(n, low4);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(n, 4), low4);
    lane[k] = _mm512_mask_add_epi8(lo, fifth[k], lo, five);
    lane[k + 4] = _mm512_mask_add_epi8(hi, fifth[k + 4], hi, five);
  }
  for (int p = 0; p < 4; ++p) {
    _mm512_storeu_si512(dst + 128 * p, _mm512_unpacklo_epi32(lane[2 * p], lane[2 * p + 1]));
    _mm512_storeu_si512(dst + 128 * p + 64, _mm512_unpackhi_epi32(lane[2 * p], lane[2 * p + 1]));
  }
}

// Rows [r0, r1) (r0 a multiple of 16) of a weight packed in panels
// (packed_weight.h: Q8_0 or Q5_0) times m Q8A activation rows, for every m:
// Q8_0 panels are multiplied where they lie, Q5_0 ones unpacked once per
// panel in lane pairs (both through LegacyLanePairTile in llama.cpp's order,
// BlockSumPanelTile for block sums), and each panel's half-precision
// scales are converted once for all its tiles; the panel after next streams
// in spread over the block steps of its first tiles. Block sums go two
// panels at a time where two are left (BlockSumPanelTile), then "the panel
// after next" is the pair after next.
template <GgmlType kType, SumOrder kOrder>
void MulRowsPackedT(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                    int64_t ldy, int64_t r0, int64_t r1) {
  static_assert(kOrder == SumOrder::kLlamaCpp || kType == GgmlType::kQ8_0);
  constexpr bool kBlockSums = kOrder == SumOrder::kBlockSums;
  constexpr int kMaxPanels = kBlockSums ? 2 : 1;
  assert(w.packed->type == kType && r0 % kPanelRows == 0);
  thread_local std::vector<int32_t> offs;
  thread_local std::vector<CacheLine> unpacked;
  thread_local std::vector<float> scales;
  const PackedWeight& pw = *w.packed;
  const int64_t nb = w.n_in / kQK, n_panels = (w.n_out + kPanelRows - 1) / kPanelRows;
  if constexpr (!kBlockSums) LaneOffsets<kType>(act, act_stride, m, nb, kMagicBits, &offs);
  if (kType != GgmlType::kQ8_0) unpacked.resize(static_cast<size_t>(8 * nb));
  scales.resize(static_cast<size_t>(kMaxPanels * kPanelRows * nb * (kBlockSums ? 1 : 2)));
  using TileFn = void (*)(const uint8_t*, const float*, int64_t, const uint8_t* const*, const int32_t* const*,
                          float*, int64_t, __mmask16, SpreadPrefetch*);
  constexpr bool kInterleave = kType == GgmlType::kQ8_0;  // Q5_0 is unpacked in pairs
  static constexpr TileFn kTiles[kLegacyPanelCols] = {LegacyLanePairTile<1, kInterleave>,
                                                      LegacyLanePairTile<2, kInterleave>};
  using BlockSumFn = void (*)(const uint8_t*, size_t, const float*, int64_t, const BlockQ8A* const*, float*,
                              int64_t, __mmask16, SpreadPrefetch*);
  static constexpr BlockSumFn kBlockSumTiles[kBlockSumCols] = {
      BlockSumPanelTile<1, 1>, BlockSumPanelTile<1, 2>, BlockSumPanelTile<1, 3>, BlockSumPanelTile<1, 4>,
      BlockSumPanelTile<1, 5>, BlockSumPanelTile<1, 6>, BlockSumPanelTile<1, 7>, BlockSumPanelTile<1, 8>};
  static constexpr BlockSumFn kBlockSumPairTiles[kBlockSumPairCols] = {
      BlockSumPanelTile<2, 1>, BlockSumPanelTile<2, 2>, BlockSumPanelTile<2, 3>, BlockSumPanelTile<2, 4>,
      BlockSumPanelTile<2, 5>};
  // The range's first two panels are asked for at once: the loop below asks
  // for each panel two ahead of the one it multiplies, so without this every
  // work item (a few panels, handed out dynamically) started on cold ones.
  {
    const int64_t first = r0 / kPanelRows, last = std::min<int64_t>(first + 2, n_panels);
    const size_t bytes = first < last ? pw.panel_bytes * static_cast<size_t>(last - first) : 0;
    for (size_t off = 0; off < bytes; off += 64)
      _mm_prefetch(reinterpret_cast<const char*>(pw.panel(first) + off), _MM_HINT_T0);
  }
  for (int64_t p0 = r0; p0 < r1;) {
    const int64_t panel = p0 / kPanelRows;
    const int np = kBlockSums && m >= kBlockSumPairMinRows && p0 + kPanelRows < r1 ? 2 : 1;
    const int64_t p_last = p0 + (np - 1) * kPanelRows;
    const int rows = static_cast<int>(r1 - p_last < kPanelRows ? r1 - p_last : kPanelRows);
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    // Block sums: the rows in tiles as even as the tile width allows (10 on
    // one panel: 5 + 5), but three rows on one panel as 1 + 2: a tile of
    // three took longer than one of four.
    // A row's sums do not depend on its tile.
    const int64_t cols = !kBlockSums ? kLegacyPanelCols : np == 2 ? kBlockSumPairCols : kBlockSumCols;
    const int64_t n_tiles = kBlockSums && np == 1 && m == 3 ? 2 : (m + cols - 1) / cols;
    // The panels after the next ones stream in over the first few tiles (a
    // slice each): with many tiles (a prompt) the others need not check.
    const int64_t pf_tiles = n_tiles < 4 ? n_tiles : 4;
    const int64_t first_ahead = panel + 2 * np;
    const uint8_t* ahead = first_ahead < n_panels ? pw.panel(first_ahead) : nullptr;
    const size_t ahead_bytes =
        pw.panel_bytes * static_cast<size_t>(std::min<int64_t>(np, n_panels - first_ahead));
    for (int k = 0; k < np; ++k) {
      for (int64_t b = 0; b < nb; ++b) {
        const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pw.scales(panel + k, b)));
        const __m512 d = _mm512_cvtph_ps(half);
        if constexpr (kBlockSums) {
          _mm512_storeu_ps(scales.data() + kPanelRows * (k * nb + b), d);
        } else {
          StorePairScales(d, scales.data() + 32 * b);
        }
      }
    }
    const uint8_t* quants = pw.quants(panel, 0);
    if constexpr (kType != GgmlType::kQ8_0) {
      for (int64_t b = 0; b < nb; ++b)
        UnpackPackedQ5(pw.quants(panel, b), reinterpret_cast<uint8_t*>(unpacked.data() + 8 * b));
      quants = reinterpret_cast<const uint8_t*>(unpacked.data());
    }
    for (int64_t t = 0; t < n_tiles; ++t) {
      SpreadPrefetch pf;
      if (ahead != nullptr && t < pf_tiles)
        pf = SpreadPrefetch(ahead + ahead_bytes * t / pf_tiles, ahead + ahead_bytes * (t + 1) / pf_tiles, nb);
      SpreadPrefetch* tile_pf = t < pf_tiles ? &pf : nullptr;
      if constexpr (kBlockSums) {
        const int64_t c0 = m * t / n_tiles, c1 = m * (t + 1) / n_tiles;
        const BlockQ8A* acts[kBlockSumCols];
        for (int64_t c = c0; c < c1; ++c)
          acts[c - c0] = reinterpret_cast<const BlockQ8A*>(act + static_cast<size_t>(c) * act_stride);
        const BlockSumFn tile = np == 2 ? kBlockSumPairTiles[c1 - c0 - 1] : kBlockSumTiles[c1 - c0 - 1];
        tile(quants, pw.panel_bytes, scales.data(), nb, acts, y + c0 * ldy + p0, ldy, mask, tile_pf);
      } else {
        const uint8_t* acts[kLegacyPanelCols];
        const int32_t* o[kLegacyPanelCols];
        const int n = PanelTileRows(act, act_stride, offs.data(), m, nb, t, acts, o);
        kTiles[n - 1](quants, scales.data(), nb, acts, o, y + t * kLegacyPanelCols * ldy + p0, ldy, mask,
                      tile_pf);
      }
    }
    p0 += np * kPanelRows;
  }
}

// A packed weight's rows in its order: block sums for Q8_0 where w asks for
// them, llama.cpp's lanes otherwise.
void MulRowsPacked(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                   int64_t ldy, int64_t r0, int64_t r1) {
  if (w.packed->type == GgmlType::kQ8_0 && w.order == SumOrder::kBlockSums)
    return MulRowsPackedT<GgmlType::kQ8_0, SumOrder::kBlockSums>(w, act, act_stride, m, y, ldy, r0, r1);
  if (w.packed->type == GgmlType::kQ8_0)
    return MulRowsPackedT<GgmlType::kQ8_0, SumOrder::kLlamaCpp>(w, act, act_stride, m, y, ldy, r0, r1);
  MulRowsPackedT<GgmlType::kQ5_0, SumOrder::kLlamaCpp>(w, act, act_stride, m, y, ldy, r0, r1);
}

// Rows [r0, r1) of a Q4_0 / Q5_0 / Q8_0 weight times m Q8A activation rows,
// through 16-row panels.
void MulRowsLegacyPanel(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, float* y,
                        int64_t ldy, int64_t r0, int64_t r1) {
  switch (w.type) {
    case GgmlType::kQ4_0:
      return MulRowsLegacyPanelT<GgmlType::kQ4_0>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ5_0:
      return MulRowsLegacyPanelT<GgmlType::kQ5_0>(w, act, act_stride, m, y, ldy, r0, r1);
    case GgmlType::kQ8_0:
      return MulRowsLegacyPanelT<GgmlType::kQ8_0>(w, act, act_stride, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsLegacyPanel: not an offset legacy type");
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
