// Activation rows quantized to Q8A (32-value blocks, for the legacy weight
// types) and Q8K (256-value blocks, for the K-quants) with AVX2. Included
// only by the per-instruction-set kernel files; internal linkage.
#pragma once

#include <immintrin.h>

#include <cmath>

#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

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
