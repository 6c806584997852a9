// SIMD helpers shared by every x86 kernel: horizontal sums, the u8 x s8 dot
// product (vpdpbusd when the including file is compiled with AVX-512 VNNI,
// vpmaddubsw + vpmaddwd otherwise) and the unpacking of 4- and 5-bit quants.
// Included only by the per-instruction-set kernel files (kernels_avx2.cpp,
// kernels_avx512.cpp), whose compile flags select the instructions;
// everything here has internal linkage.
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

// The 128 quants (0..63) of half h of a Q6_K block, as four 32-value vectors
// in value order (the layout is in quant_blocks.h).
inline void UnpackQ6KHalf(const BlockQ6_K& b, int h, __m256i q[4]) {
  const __m256i low4 = _mm256_set1_epi8(15), low2 = _mm256_set1_epi8(3);
  const __m256i ql0 = LoadU(b.ql + 64 * h), ql1 = LoadU(b.ql + 64 * h + 32);
  const __m256i qh = LoadU(b.qh + 32 * h);
  q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4));
  q[1] = _mm256_or_si256(_mm256_and_si256(ql1, low4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4));
}

}  // namespace
}  // namespace ragd::inference::kernels
