// Batched (prefill) kernel for AVX-512 VNNI on 16-row panels (layout in
// panel_common.h): one vpdpbusd multiplies 4 values of 16 weight rows by
// 4 broadcast activation values. Included only by kernels_avx512.cpp;
// internal linkage.
#pragma once

#include <immintrin.h>

#include "inference/kernels/packed_weight.h"
#include "inference/kernels/x86/panel_avx512.h"

namespace ragd::inference::kernels {
namespace {

constexpr int kPanelCols = 8;  // activation rows per tile

// int32 -> float (the zero-masking form: GCC 12 warns about the plain one).
inline __m512 CvtI32F32(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xFFFF, v); }

// Where a tile reads a panel's quants: an expanded Panel (Repack), one
// sub-block after the other, kT.sub / 4 lane vectors of 64 bytes each.
struct ExpandedQuants {
  const uint8_t* wq;
  __m512i Quants(int t) const { return _mm512_loadu_si512(wq + t * 64); }
  void NextSub(int dwords) { wq += dwords * 64; }
};

// A K-quant panel as PanelTile reads it (sub-blocks of 32, 8 to a super-block,
// with mins), from an expanded Panel: the widened scales and mins and the
// converted d and dmin as Repack / ExpandPackedQ4K wrote them.
struct ExpandedKPanel : ExpandedQuants {
  const int32_t* iscale;
  const int32_t* imin;
  const float* dsup;
  const float* msup;
  explicit ExpandedKPanel(const Panel& p)
      : ExpandedQuants{p.q.data()},
        iscale(p.iscale.data()),
        imin(p.imin.data()),
        dsup(p.dsup.data()),
        msup(p.msup.data()) {}
  __m512i Scales() const { return _mm512_loadu_si512(iscale); }
  __m512i Mins() const { return _mm512_loadu_si512(imin); }
  void NextSub(int dwords) {
    ExpandedQuants::NextSub(dwords);
    iscale += 16;
    imin += 16;
  }
  __m512 D() const { return _mm512_loadu_ps(dsup); }
  __m512 Dmin() const { return _mm512_loadu_ps(msup); }
  void NextSuper() {
    dsup += 16;
    msup += 16;
  }
};

// The same reads straight from a Q4_K panel packed at load (packed_weight.h):
// each lane vector's nibbles split, scales and mins widened and d, dmin
// converted as they are used, so that a step with few activation rows (one
// tile a panel) does not first write the expanded panel out and read it back.
// The same values as ExpandPackedQ4K gives, so the same sums.
//
// Meanwhile the same super-block of the next panel streams in, a few lines
// per sub-block: the tiles' walk is no stream the hardware prefetchers
// follow.
struct PackedQ4KPanel {
  static constexpr int kLines = static_cast<int>((PackedQ4K::kBytes + 63) / 64);  // of a super-block
  static constexpr int kLinesPerSub = (kLines + 7) / 8;
  const uint8_t* block;  // the current super-block
  size_t block_bytes;
  const uint8_t* ahead = nullptr;  // that of the next panel, or null
  int sub = 0;                     // the current sub-block
  __m512i Quants(int t) const {
    const __m512i v = _mm512_loadu_si512(block + 64 * (8 * (sub / 2) + t));
    const __m512i low4 = _mm512_set1_epi8(15);
    return sub % 2 == 0 ? _mm512_and_si512(v, low4) : _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
  __m512i Scales() const { return Widen(PackedQ4K::kScales); }
  __m512i Mins() const { return Widen(PackedQ4K::kMins); }
  void NextSub(int) {
    if (ahead != nullptr) {
      for (int k = kLinesPerSub * sub; k < kLinesPerSub * (sub + 1) && k < kLines; ++k)
        _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 * k), _MM_HINT_T0);
    }
    ++sub;
  }
  __m512 D() const { return Halves(PackedQ4K::kD); }
  __m512 Dmin() const { return Halves(PackedQ4K::kDmin); }
  void NextSuper() {
    block += block_bytes;
    if (ahead != nullptr) ahead += block_bytes;
    sub = 0;
  }

 private:
  __m512i Widen(size_t at) const {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + at + 16 * sub)));
  }
  __m512 Halves(size_t at) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + at)));
  }
};

// Integer dot of the source's current sub-block (kT.sub / 4 dwords) of the
// panel rows with each of the C activation rows, offsets included; moves the
// activations on to the next sub-block.
template <GgmlType kType, int C, typename Src>
inline void SubBlockDots(const Src& src, const int8_t*& qs, const int32_t*& off, __m512i* isum) {
  constexpr PanelTraits kT = TraitsFor(kType);
  for (int c = 0; c < C; ++c) isum[c] = _mm512_set1_epi32(off[c]);
  for (int t = 0; t < kT.sub / 4; ++t) {
    const __m512i wv = src.Quants(t);
    for (int c = 0; c < C; ++c) {
      int32_t a4;
      std::memcpy(&a4, qs + c * kT.sub + 4 * t, 4);
      isum[c] = _mm512_dpbusd_epi32(isum[c], wv, _mm512_set1_epi32(a4));
    }
  }
  qs += C * kT.sub;
  off += C;
}

// y[c*ldy + r0 + lane] for the C activation rows of the tile at c0, one
// K-quant panel (group > 1) read from `src` (ExpandedKPanel, PackedQ4KPanel).
template <GgmlType kType, int C, typename Src>
void KPanelTile(Src src, const PreparedActs& pa, int64_t c0, float* y, int64_t ldy, int64_t r0,
                __mmask16 store_mask) {
  constexpr PanelTraits kT = TraitsFor(kType);
  static_assert(kT.group > 1 && kT.has_min);
  const int64_t n_sub = pa.n_sub;
  const int8_t* qs = pa.qs.data() + c0 * pa.k;
  const int32_t* off = pa.off.data() + c0 * n_sub;
  const float* da = pa.da.data() + c0 * pa.n_scale;
  const int32_t* asum = pa.asum.data() + c0 * n_sub;
  __m512 acc[C], accm[C];
  for (int c = 0; c < C; ++c) acc[c] = accm[c] = _mm512_setzero_ps();
  for (int64_t g = 0; g < n_sub / kT.group; ++g) {
    __m512i total[C], mins[C];
    for (int c = 0; c < C; ++c) total[c] = mins[c] = _mm512_setzero_si512();
    for (int j = 0; j < kT.group; ++j) {
      __m512i isum[C];
      SubBlockDots<kType, C>(src, qs, off, isum);
      const __m512i sc = src.Scales();
      for (int c = 0; c < C; ++c) total[c] = _mm512_add_epi32(total[c], _mm512_mullo_epi32(isum[c], sc));
      const __m512i mn = src.Mins();
      for (int c = 0; c < C; ++c) {
        mins[c] = _mm512_add_epi32(mins[c], _mm512_mullo_epi32(mn, _mm512_set1_epi32(asum[c])));
      }
      asum += C;
      src.NextSub(kT.sub / 4);
    }
    const __m512 d = src.D();
    for (int c = 0; c < C; ++c) {
      acc[c] = _mm512_fmadd_ps(CvtI32F32(total[c]), _mm512_mul_ps(d, _mm512_set1_ps(da[c])), acc[c]);
    }
    const __m512 dm = src.Dmin();
    for (int c = 0; c < C; ++c) {
      accm[c] = _mm512_fmadd_ps(CvtI32F32(mins[c]), _mm512_mul_ps(dm, _mm512_set1_ps(da[c])), accm[c]);
    }
    src.NextSuper();
    da += C;
  }
  for (int c = 0; c < C; ++c) acc[c] = _mm512_sub_ps(acc[c], accm[c]);
  for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + (c0 + c) * ldy + r0, store_mask, acc[c]);
}

// y[c*ldy + r0 + lane] for the C activation rows of the tile at c0, one panel.
template <GgmlType kType, int C>
void PanelTile(const Panel& p, const PreparedActs& pa, int64_t c0, float* y, int64_t ldy, int64_t r0,
               __mmask16 store_mask) {
  constexpr PanelTraits kT = TraitsFor(kType);
  if constexpr (kT.group > 1) {
    KPanelTile<kType, C>(ExpandedKPanel(p), pa, c0, y, ldy, r0, store_mask);
  } else {
    const int64_t n_sub = pa.n_sub;
    const int8_t* qs = pa.qs.data() + c0 * pa.k;
    const int32_t* off = pa.off.data() + c0 * n_sub;
    const float* da = pa.da.data() + c0 * pa.n_scale;
    const float* msum = pa.msum.data() + c0 * n_sub;
    const float* scale = p.scale.data();
    const float* mterm = p.mterm.data();
    ExpandedQuants src{p.q.data()};
    __m512 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t j = 0; j < n_sub; ++j) {
      __m512i isum[C];
      SubBlockDots<kType, C>(src, qs, off, isum);
      src.NextSub(kT.sub / 4);
      const __m512 sc = _mm512_loadu_ps(scale);
      for (int c = 0; c < C; ++c) {
        acc[c] = _mm512_fmadd_ps(CvtI32F32(isum[c]), _mm512_mul_ps(sc, _mm512_set1_ps(da[c])), acc[c]);
      }
      if constexpr (kT.has_min) {
        const __m512 mt = _mm512_loadu_ps(mterm);
        for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(mt, _mm512_set1_ps(msum[c]), acc[c]);
        mterm += 16;
        msum += C;
      }
      scale += 16;
      da += C;
    }
    for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + (c0 + c) * ldy + r0, store_mask, acc[c]);
  }
}

// The panel's rows (of which `rows` exist) times all m activation rows.
template <GgmlType kType>
void PanelTimesActs(const Panel& panel, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                    int64_t p0, int rows) {
  using TileFn = void (*)(const Panel&, const PreparedActs&, int64_t, float*, int64_t, int64_t, __mmask16);
  static constexpr TileFn kTiles[kPanelCols] = {PanelTile<kType, 1>, PanelTile<kType, 2>, PanelTile<kType, 3>,
                                                PanelTile<kType, 4>, PanelTile<kType, 5>, PanelTile<kType, 6>,
                                                PanelTile<kType, 7>, PanelTile<kType, 8>};
  const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
  for (int64_t c0 = 0; c0 < m; c0 += kPanelCols) {
    const int cols = static_cast<int>(m - c0 < kPanelCols ? m - c0 : kPanelCols);
    kTiles[cols - 1](panel, acts, c0, y, ldy, p0, mask);
  }
}

template <GgmlType kType>
void MulRowsPanelT(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                   int64_t r0, int64_t r1) {
  thread_local Panel panel;
  for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows) {
    const int rows = static_cast<int>(r1 - p0 < kPanelRows ? r1 - p0 : kPanelRows);
    Repack<kType>(w, p0, rows, &panel);
    PanelTimesActs<kType>(panel, acts, m, y, ldy, p0, rows);
  }
}

// Panel `panel` of a Q4_K weight packed at load (packed_weight.h) as Repack
// gives it: the nibbles split, the 6-bit scales and mins widened, the
// half-precision d and dmin converted (rows past the matrix are zero there
// as here).
inline void ExpandPackedQ4K(const PackedWeight& pw, int64_t panel, Panel* p) {
  const int64_t n_super = pw.n_blocks;
  p->q.resize(static_cast<size_t>(n_super) * kQKK * kPanelRows);
  p->iscale.resize(static_cast<size_t>(n_super) * 8 * kPanelRows);
  p->imin.resize(p->iscale.size());
  p->dsup.resize(static_cast<size_t>(n_super) * kPanelRows);
  p->msup.resize(p->dsup.size());
  const __m512i low4 = _mm512_set1_epi8(15);
  for (int64_t b = 0; b < n_super; ++b) {
    const uint8_t* src = pw.quants(panel, b);
    uint8_t* q = p->q.data() + b * kQKK * kPanelRows;  // 64 dwords of 16 rows
    for (int c = 0; c < 4; ++c) {
      for (int t = 0; t < 8; ++t) {
        const __m512i v = _mm512_loadu_si512(src + 64 * (8 * c + t));
        _mm512_storeu_si512(q + 64 * (16 * c + t), _mm512_and_si512(v, low4));
        _mm512_storeu_si512(q + 64 * (16 * c + 8 + t), _mm512_and_si512(_mm512_srli_epi16(v, 4), low4));
      }
    }
    for (int j = 0; j < 8; ++j) {
      const size_t at = static_cast<size_t>((8 * b + j) * kPanelRows);
      _mm512_storeu_si512(p->iscale.data() + at,
                          _mm512_cvtepu8_epi32(_mm_loadu_si128(
                              reinterpret_cast<const __m128i*>(src + PackedQ4K::kScales + 16 * j))));
      _mm512_storeu_si512(p->imin.data() + at,
                          _mm512_cvtepu8_epi32(_mm_loadu_si128(
                              reinterpret_cast<const __m128i*>(src + PackedQ4K::kMins + 16 * j))));
    }
    _mm512_storeu_ps(
        p->dsup.data() + b * kPanelRows,
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + PackedQ4K::kD))));
    _mm512_storeu_ps(
        p->msup.data() + b * kPanelRows,
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + PackedQ4K::kDmin))));
  }
}

// Activation rows up to which MulRowsPackedPanel's tiles read the packed
// panels directly (PackedQ4KPanel) instead of expanding each panel first:
// with one or two tiles a panel the expansion is mostly a round trip through
// memory (at 24 and 32 rows expanding once was no slower).
constexpr int64_t kPackedQ4KDirectMaxRows = 2 * kPanelCols;

// Rows [r0, r1) (r0 a multiple of 16) of a Q4_K weight packed at load times
// the activations from PreparePanelActs, for every m: bitwise MulRowsPanel's
// rows, without its per-step repacking.
void MulRowsPackedPanel(const WeightView& w, const PreparedActs& acts, int64_t m, float* y, int64_t ldy,
                        int64_t r0, int64_t r1) {
  assert(w.packed->type == GgmlType::kQ4_K && r0 % kPanelRows == 0);
  const PackedWeight& pw = *w.packed;
  if (m <= kPackedQ4KDirectMaxRows) {
    using TileFn =
        void (*)(PackedQ4KPanel, const PreparedActs&, int64_t, float*, int64_t, int64_t, __mmask16);
    static constexpr TileFn kTiles[kPanelCols] = {
        KPanelTile<GgmlType::kQ4_K, 1, PackedQ4KPanel>, KPanelTile<GgmlType::kQ4_K, 2, PackedQ4KPanel>,
        KPanelTile<GgmlType::kQ4_K, 3, PackedQ4KPanel>, KPanelTile<GgmlType::kQ4_K, 4, PackedQ4KPanel>,
        KPanelTile<GgmlType::kQ4_K, 5, PackedQ4KPanel>, KPanelTile<GgmlType::kQ4_K, 6, PackedQ4KPanel>,
        KPanelTile<GgmlType::kQ4_K, 7, PackedQ4KPanel>, KPanelTile<GgmlType::kQ4_K, 8, PackedQ4KPanel>};
    for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows) {
      const int rows = static_cast<int>(r1 - p0 < kPanelRows ? r1 - p0 : kPanelRows);
      const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
      const PackedQ4KPanel panel{pw.panel(p0 / kPanelRows), pw.block_bytes,
                                 p0 + kPanelRows < r1 ? pw.panel(p0 / kPanelRows + 1) : nullptr};
      for (int64_t c0 = 0; c0 < m; c0 += kPanelCols) {
        const int cols = static_cast<int>(m - c0 < kPanelCols ? m - c0 : kPanelCols);
        kTiles[cols - 1](panel, acts, c0, y, ldy, p0, mask);
      }
    }
    return;
  }
  thread_local Panel panel;
  for (int64_t p0 = r0; p0 < r1; p0 += kPanelRows) {
    const int rows = static_cast<int>(r1 - p0 < kPanelRows ? r1 - p0 : kPanelRows);
    ExpandPackedQ4K(pw, p0 / kPanelRows, &panel);
    PanelTimesActs<GgmlType::kQ4_K>(panel, acts, m, y, ldy, p0, rows);
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
    case GgmlType::kQ4_1:
      return MulRowsPanelT<GgmlType::kQ4_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_1:
      return MulRowsPanelT<GgmlType::kQ5_1>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ4_K:
      return MulRowsPanelT<GgmlType::kQ4_K>(w, acts, m, y, ldy, r0, r1);
    case GgmlType::kQ5_K:
      return MulRowsPanelT<GgmlType::kQ5_K>(w, acts, m, y, ldy, r0, r1);
    default:
      assert(false && "MulRowsPanel: no panel kernel for this type");
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
