// exp(x) as llama.cpp's AVX-512 CPU backend computes it (ggml's vector expf:
// a degree-5 polynomial after reducing by ln 2, scaled by 2^n with one
// rounding), element by element: the same float for every x, on 16 or 8
// lanes or one at a time. Used where ragd reproduces llama.cpp's roundings
// (the F16 attention's softmax, SwiGLU). Results are ~1 ulp from the true exp;
// arguments whose exponent passes 192 give 0 (negative) or +inf (positive).
// Internal linkage: include only from kernel translation units.
#pragma once

#include <immintrin.h>

#include <cmath>

namespace ragd::inference::kernels {
namespace x86exp {

constexpr float kShift = 0x1.8p23f;
constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kLn2Hi = 0x1.62e4p-1f;
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
constexpr float kP5 = 0x1.0e4020p-7f, kP4 = 0x1.573e2ep-5f, kP3 = 0x1.555e66p-3f, kP2 = 0x1.fffdb6p-2f,
                kP1 = 0x1.ffffecp-1f;

}  // namespace x86exp

inline float ExpLlama(float x) {
  using namespace x86exp;
  const float z = std::fma(x, kLog2e, kShift);
  const float n = z - kShift;
  const float b = std::fma(-n, kLn2Lo, std::fma(-n, kLn2Hi, x));
  const float u = b * b;
  const float j =
      std::fma(std::fma(std::fma(kP5, b, kP4), u, std::fma(kP3, b, kP2)), u, std::fma(kP1, b, 1.0f));
  if (std::fabs(n) > 192.0f) return n > 0 ? INFINITY : 0.0f;
  return std::ldexp(j, static_cast<int>(n));
}

__attribute__((target("avx2,fma"))) inline __m256 ExpLlama8(__m256 x) {
  using namespace x86exp;
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), _mm256_set1_ps(kShift));
  const __m256 n = _mm256_sub_ps(z, _mm256_set1_ps(kShift));
  const __m256 b =
      _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j =
      _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(kP5), b, _mm256_set1_ps(kP4)), u,
                                      _mm256_fmadd_ps(_mm256_set1_ps(kP3), b, _mm256_set1_ps(kP2))),
                      u, _mm256_fmadd_ps(_mm256_set1_ps(kP1), b, _mm256_set1_ps(1.0f)));
  // j * 2^n with one rounding, as scalef: for n in [-126, 127] one exact
  // scale by a normal 2^n; below, 2^(n+100) (exact) then 2^-100; above,
  // 2^127 (exact) then 2^(n-127), n capped at 129: j * 2^128 may still be
  // finite (j < 1), j * 2^129 never is, as with scalef.
  const __m256 nc = _mm256_min_ps(n, _mm256_set1_ps(129.0f));
  const __m256i ni = _mm256_cvtps_epi32(nc);
  const __m256i tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(-126), ni);  // n < -126
  const __m256i high = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(127));   // n > 127
  __m256i e = _mm256_blendv_epi8(ni, _mm256_add_epi32(ni, _mm256_set1_epi32(100)), tiny);
  e = _mm256_blendv_epi8(e, _mm256_set1_epi32(127), high);
  __m256 r = _mm256_mul_ps(
      j, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23)));
  r = _mm256_blendv_ps(r, _mm256_mul_ps(r, _mm256_set1_ps(0x1p-100f)), _mm256_castsi256_ps(tiny));
  const __m256 above = _mm256_castsi256_ps(_mm256_slli_epi32(ni, 23));  // 2^(n-127) for n in [128, 129]
  r = _mm256_blendv_ps(r, _mm256_mul_ps(r, above), _mm256_castsi256_ps(high));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 out_of_range = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
  const __m256 positive = _mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_GT_OQ);
  const __m256 limit = _mm256_and_ps(positive, _mm256_set1_ps(INFINITY));
  return _mm256_blendv_ps(r, limit, out_of_range);
}

#if defined(__AVX512F__)
// ExpLlama on 16 lanes: ggml's AVX-512 code itself (scalef does the scaling).
inline __m512 ExpLlama16(__m512 x) {
  using namespace x86exp;
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), _mm512_set1_ps(kShift));
  const __m512 n = _mm512_sub_ps(z, _mm512_set1_ps(kShift));
  const __m512 b =
      _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x));
  const __m512 u = _mm512_mul_ps(b, b);
  const __m512 j =
      _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(kP5), b, _mm512_set1_ps(kP4)), u,
                                      _mm512_fmadd_ps(_mm512_set1_ps(kP3), b, _mm512_set1_ps(kP2))),
                      u, _mm512_fmadd_ps(_mm512_set1_ps(kP1), b, _mm512_set1_ps(1.0f)));
  const __m512 r = _mm512_scalef_ps(j, n);
  const __mmask16 out_of_range = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  if (out_of_range == 0) return r;
  const __mmask16 positive = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_GT_OQ);
  const __m512 limit = _mm512_maskz_mov_ps(positive, _mm512_set1_ps(INFINITY));
  return _mm512_mask_blend_ps(out_of_range, r, limit);
}
#endif

}  // namespace ragd::inference::kernels
