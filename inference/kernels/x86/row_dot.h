// Row-by-row x86 kernels (AVX2 baseline; VNNI dot products when the including
// file is compiled with AVX-512 VNNI): weight rows in their GGUF layout times
// up to four activation rows at once, each weight block unpacked once. Used
// for decode and small batches. Included only by kernels_avx2.cpp and
// kernels_avx512.cpp, whose compile flags select the instructions; everything
// here has internal linkage.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "inference/kernels/kernel_set.h"

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define RAGD_X86_VNNI 1
#else
#define RAGD_X86_VNNI 0
#endif

namespace ragd::inference::kernels {
namespace {

inline float H2F(uint16_t h) { return _cvtsh_ss(h); }

inline float Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int32_t HsumI(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

inline __m256i LoadU(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// acc + sum of 4 adjacent u8*s8 products per int32 lane.
inline __m256i DotU8I8(__m256i acc, __m256i u, __m256i s) {
#if RAGD_X86_VNNI
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// Pairs of u8*s8 products summed to int16 (no overflow for u <= 63), then
// multiplied by the int16 scales and summed in pairs to int32.
inline __m256i DotU8I8Scaled(__m256i u, __m256i s, __m256i scales16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scales16);
}

// 32 bits -> 32 bytes, 0xFF where the bit is set (byte j <- bit j).
inline __m256i BitsToBytes(uint32_t bits) {
  const __m256i pick = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), pick);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
}

// The 32 nibbles of a legacy block in value order (low nibbles first).
inline __m256i UnpackNibbles32(const uint8_t* qs) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
  return _mm256_and_si256(both, _mm256_set1_epi8(15));
}

template <typename Block>
inline __m256i UnpackQ5(const Block& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  return _mm256_or_si256(UnpackNibbles32(b.qs), _mm256_and_si256(BitsToBytes(qh), _mm256_set1_epi8(16)));
}

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
  const __m256i low4 = _mm256_set1_epi8(15);
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
      const __m256i raw = LoadU(blk.qs + 32 * ch);
      __m256i lo = _mm256_and_si256(raw, low4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
      if constexpr (kType == GgmlType::kQ5_K) {
        const __m256i bit = _mm256_set1_epi8(1);
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * ch), bit), 4));
        hi = _mm256_or_si256(hi,
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * ch + 1), bit), 4));
      }
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
  const __m256i low4 = _mm256_set1_epi8(15), low2 = _mm256_set1_epi8(3);
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const BlockQ6_K& blk = w[b];
    const __m256i scales16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.scales)));
    alignas(32) int16_t sc[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc), scales16);
    __m256i isum[C];
    for (int c = 0; c < C; ++c) isum[c] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = LoadU(blk.ql + 64 * h), ql1 = LoadU(blk.ql + 64 * h + 32);
      const __m256i qh = LoadU(blk.qh + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4)),
      };
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

// F32 / F16 / BF16 weights with float activations.
template <GgmlType kType>
inline __m256 LoadWeights8(const uint8_t* p) {
  if constexpr (kType == GgmlType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (kType == GgmlType::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
}

template <GgmlType kType, int C>
void DotTileFloat(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out) {
  constexpr int kBytes = kType == GgmlType::kF32 ? 4 : 2;
  __m256 acc[C][2];
  for (int c = 0; c < C; ++c) acc[c][0] = acc[c][1] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = LoadWeights8<kType>(w_row + i * kBytes);
    const __m256 w1 = LoadWeights8<kType>(w_row + (i + 8) * kBytes);
    for (int c = 0; c < C; ++c) {
      const float* x = reinterpret_cast<const float*>(acts[c]) + i;
      acc[c][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x), acc[c][0]);
      acc[c][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + 8), acc[c][1]);
    }
  }
  for (int c = 0; c < C; ++c) {
    float s = Hsum(_mm256_add_ps(acc[c][0], acc[c][1]));
    const float* x = reinterpret_cast<const float*>(acts[c]);
    for (int64_t k = i; k < n; ++k) {
      float v;
      if constexpr (kType == GgmlType::kF32) {
        std::memcpy(&v, w_row + 4 * k, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, w_row + 2 * k, 2);
        v = kType == GgmlType::kF16 ? H2F(h) : Bf16ToFloat(h);
      }
      s += v * x[k];
    }
    out[c] = s;
  }
}

using DotTileFn = void (*)(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out);

template <int C>
DotTileFn DotTileFor(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return DotTileFloat<GgmlType::kF32, C>;
    case GgmlType::kF16:
      return DotTileFloat<GgmlType::kF16, C>;
    case GgmlType::kBF16:
      return DotTileFloat<GgmlType::kBF16, C>;
    case GgmlType::kQ4_0:
      return DotTileLegacy<GgmlType::kQ4_0, C>;
    case GgmlType::kQ4_1:
      return DotTileLegacy<GgmlType::kQ4_1, C>;
    case GgmlType::kQ5_0:
      return DotTileLegacy<GgmlType::kQ5_0, C>;
    case GgmlType::kQ5_1:
      return DotTileLegacy<GgmlType::kQ5_1, C>;
    case GgmlType::kQ8_0:
      return DotTileLegacy<GgmlType::kQ8_0, C>;
    case GgmlType::kQ4_K:
      return DotTileQ45K<GgmlType::kQ4_K, C>;
    case GgmlType::kQ5_K:
      return DotTileQ45K<GgmlType::kQ5_K, C>;
    case GgmlType::kQ6_K:
      return DotTileQ6K<C>;
    default:
      return nullptr;
  }
}

float VecDotX86(GgmlType type, int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  float out;
  DotTileFor<1>(type)(n, w_row, &act_row, &out);
  return out;
}

// Rows [r0, r1) times all m activation rows, up to 4 activation rows per pass.
void MulRowsDirect(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                   const void* /*prepared*/, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const DotTileFn fns[4] = {DotTileFor<1>(w.type), DotTileFor<2>(w.type), DotTileFor<3>(w.type),
                            DotTileFor<4>(w.type)};
  for (int64_t c0 = 0; c0 < m; c0 += 4) {
    const int cols = static_cast<int>(m - c0 < 4 ? m - c0 : 4);
    const uint8_t* acts[4];
    for (int c = 0; c < cols; ++c) acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
    for (int64_t r = r0; r < r1; ++r) {
      float out[4];
      fns[cols - 1](w.n_in, w.data + static_cast<size_t>(r) * w.row_bytes, acts, out);
      for (int c = 0; c < cols; ++c) y[(c0 + c) * ldy + r] = out[c];
    }
  }
}

// Activation quantization (AVX2 is enough: it is a small part of the work).
// Rounds to nearest even like the reference, so results are identical.
inline __m256i QuantizeBlock32(const float* x, __m256 id, __m256i* sum_lo, __m256i* sum_hi) {
  __m256i v[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), id);
    v[k] = _mm256_cvtps_epi32(_mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  *sum_lo = _mm256_add_epi32(v[0], v[1]);
  *sum_hi = _mm256_add_epi32(v[2], v[3]);
  const __m256i p01 = _mm256_packs_epi32(v[0], v[1]);
  const __m256i p23 = _mm256_packs_epi32(v[2], v[3]);
  const __m256i p = _mm256_packs_epi16(p01, p23);
  // packs works per 128-bit lane: restore the order of the eight dwords.
  return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline float AbsMax(const float* x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 mx = _mm256_setzero_ps();
  for (int i = 0; i < n; i += 8) mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

void QuantizeQ8AX86(const float* x, int64_t n, BlockQ8A* out) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* v = x + kQK * b;
    const float amax = AbsMax(v, 32);
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    __m256i lo, hi;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[b].qs),
                        QuantizeBlock32(v, _mm256_set1_ps(id), &lo, &hi));
    out[b].d = Q8AScale(amax);
    out[b].sum = HsumI(_mm256_add_epi32(lo, hi));
  }
}

void QuantizeQ8KX86(const float* x, int64_t n, BlockQ8K* out) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* v = x + kQKK * b;
    // The signed value of largest magnitude: the first element equal in
    // magnitude to the vector maximum.
    const float amax = AbsMax(v, 256);
    float max = 0;
    for (int j = 0; j < kQKK && amax != 0; ++j) {
      if (std::fabs(v[j]) == amax) {
        max = v[j];
        break;
      }
    }
    const float iscale = max != 0 ? -127.0f / max : 0.0f;
    const __m256 id = _mm256_set1_ps(iscale);
    for (int k = 0; k < 8; ++k) {
      __m256i lo, hi;  // 128 saturates to 127 in the packs: min(127, q)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[b].qs + 32 * k),
                          QuantizeBlock32(v + 32 * k, id, &lo, &hi));
      out[b].bsums[2 * k] = static_cast<int16_t>(HsumI(lo));
      out[b].bsums[2 * k + 1] = static_cast<int16_t>(HsumI(hi));
    }
    out[b].d = max != 0 ? 1.0f / iscale : 0.0f;
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
