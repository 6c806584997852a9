// Vector GELU (tanh form) and softmax for x86 (AVX2 + FMA), built on a
// polynomial exp with ~2e-7 relative error. Included only by the
// per-instruction-set kernel files; internal linkage.
#pragma once

#include <immintrin.h>

#include <cmath>

#include "inference/kernels/x86/exp.h"

namespace ragd::inference::kernels {
namespace {

// exp(x) for x in float range; inputs below -87 give ~0 (e.g. -inf -> 0).
inline __m256 Exp8(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.4426950408889634f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // 2^n with n in [-126, 127]: build the exponent bits.
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// 0.5x(1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi)(x + 0.044715x^3).
inline __m256 Gelu8(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 u = _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.7978845608028654f)),
                                 _mm256_fmadd_ps(x2, _mm256_set1_ps(0.044715f), _mm256_set1_ps(1.0f)));
  const __m256 e = Exp8(_mm256_mul_ps(u, _mm256_set1_ps(-2.0f)));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void GeluTanhX86(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, Gelu8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = i; k < n; ++k) tail[k - i] = x[k];
    _mm256_storeu_ps(tail, Gelu8(_mm256_loadu_ps(tail)));
    for (int64_t k = i; k < n; ++k) x[k] = tail[k - i];
  }
}

// gate = silu(gate) * up = gate / (1 + exp(-gate)) * up, with llama.cpp's
// roundings (ggml_vec_swiglu_f32 on AVX-512): its vector exp on groups of 16
// values from the start, libm's expf on the last n % 16.
#if !defined(__AVX512F__)
void SwiGluX86(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (const int64_t vector_end = n / 16 * 16; i < vector_end; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = ExpLlama8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(gate + i,
                     _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

#else
// SwiGluX86's results, 16 values per step.
void SwiGluAvx512(float* gate, const float* up, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 g = _mm512_loadu_ps(gate + i);
    const __m512 e = ExpLlama16(_mm512_sub_ps(_mm512_setzero_ps(), g));
    _mm512_storeu_ps(gate + i,
                     _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}
#endif

void SoftmaxX86(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = x[0];
  int64_t i = 0;
  if (n >= 8) {
    __m256 m = _mm256_loadu_ps(x);
    for (i = 8; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    for (float v : lanes) mx = v > mx ? v : mx;
  }
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
    _mm256_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  double total = 0;
  for (float v : lanes) total += v;
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    total += x[i];
  }
  const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / total));
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (; i < n; ++i) x[i] *= static_cast<float>(1.0 / total);
}

int64_t FindAtLeastX86(const float* x, int64_t begin, int64_t n, float t) {
  const __m256 vt = _mm256_set1_ps(t);
  int64_t i = begin;
  for (; i + 8 <= n; i += 8) {
    const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), vt, _CMP_GE_OQ));
    if (hits != 0) return i + __builtin_ctz(static_cast<unsigned>(hits));
  }
  for (; i < n; ++i) {
    if (x[i] >= t) return i;
  }
  return n;
}

// ArgmaxRef's result in two vector passes: the largest value (max_ps keeps
// the running maximum where x is NaN), then the first index holding it.
int64_t ArgmaxX86(const float* x, int64_t n, float* max) {
  __m256 acc = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_max_ps(_mm256_loadu_ps(x + i), acc);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float m = -INFINITY;
  for (float v : lanes) m = v > m ? v : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  *max = m;
  if (m == -INFINITY) return 0;       // nothing greater than -inf: ArgmaxRef's 0
  return FindAtLeastX86(x, 0, n, m);  // nothing exceeds m: the first equal to it
}

}  // namespace
}  // namespace ragd::inference::kernels
