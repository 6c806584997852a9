#include "retrieval/bert_kernels.h"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

// One clone per instruction set, chosen by the dynamic loader (ifunc) from the
// running CPU. The loops are branch-free and use `omp simd` for their
// reductions so that every clone vectorizes (built with -fopenmp; only the
// simd directives are used, no OpenMP threads).
#define RAGD_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))

namespace ragd::retrieval::kernels {
namespace {

// exp(x) for x <= 0 by range reduction and a degree-6 polynomial (relative
// error ~2e-7).
inline float ExpNonPositive(float x) {
  x = x < -87.f ? -87.f : x;
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return p * scale;
}

// gelu(v) = v/2 (1 + erf(v / sqrt 2)); erf by Abramowitz & Stegun 7.1.26
// (absolute error < 1.5e-7), far below the float32 noise of the model.
inline float Gelu(float v) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  const float z = v * kInvSqrt2;
  const float a = std::fabs(z);
  const float k = 1.f / (1.f + 0.3275911f * a);
  const float poly =
      ((((1.061405429f * k - 1.453152027f) * k + 1.421413741f) * k - 0.284496736f) * k + 0.254829592f) * k;
  const float erf_abs = 1.f - poly * ExpNonPositive(-a * a);
  return 0.5f * v * (1.f + std::copysign(erf_abs, z));
}

}  // namespace

RAGD_KERNEL void AddBias(float* y, int rows, int n, const float* b) {
  for (int i = 0; i < rows; ++i) {
    float* __restrict row = y + static_cast<size_t>(i) * n;
#pragma omp simd
    for (int j = 0; j < n; ++j) row[j] += b[j];
  }
}

RAGD_KERNEL void BiasGelu(float* x, int rows, int n, const float* b) {
  for (int i = 0; i < rows; ++i) {
    float* __restrict row = x + static_cast<size_t>(i) * n;
#pragma omp simd
    for (int j = 0; j < n; ++j) row[j] = Gelu(row[j] + b[j]);
  }
}

RAGD_KERNEL void AddLayerNorm(float* x, const float* r, const float* r_bias, int rows, int n, const float* g,
                              const float* beta, float eps) {
  for (int i = 0; i < rows; ++i) {
    float* __restrict row = x + static_cast<size_t>(i) * n;
    if (r != nullptr) {
      const float* __restrict rr = r + static_cast<size_t>(i) * n;
#pragma omp simd
      for (int j = 0; j < n; ++j) row[j] += rr[j] + r_bias[j];
    }
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < n; ++j) sum += row[j];
    const float mean = sum / static_cast<float>(n);
    float var = 0;
#pragma omp simd reduction(+ : var)
    for (int j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<float>(n);
    const float inv = 1.f / std::sqrt(var + eps);
#pragma omp simd
    for (int j = 0; j < n; ++j) row[j] = (row[j] - mean) * inv * g[j] + beta[j];
  }
}

RAGD_KERNEL void Softmax(float* s, int rows, int n) {
  for (int i = 0; i < rows; ++i) {
    float* __restrict row = s + static_cast<size_t>(i) * n;
    float mx = row[0];
#pragma omp simd reduction(max : mx)
    for (int j = 1; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < n; ++j) {
      row[j] = ExpNonPositive(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.f / sum;
#pragma omp simd
    for (int j = 0; j < n; ++j) row[j] *= inv;
  }
}

}  // namespace ragd::retrieval::kernels
