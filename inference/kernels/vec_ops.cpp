#include "inference/kernels/vec_ops.h"

#include <cmath>
#include <cstring>

#include "inference/kernels/cpu_features.h"
#include "inference/kernels/quant_blocks.h"

namespace ragd::inference {
namespace {

float DotScalar(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (float v : acc) sum += v;
  return sum;
}

void AxpyScalar(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// IEEE half rounding in software: exact for normal, subnormal and overflow.
float RoundToHalfScalar(float f) {
  if (!std::isfinite(f)) return f;
  const float a = std::fabs(f);
  if (a >= 65520.f) return std::copysign(INFINITY, f);  // rounds past the largest half
  // Spacing of halves around |f|: 2^(e-10) for normals, 2^-24 below 2^-14.
  const int e = a < 6.103515625e-05f ? -14 : std::ilogb(a);
  const float ulp = std::ldexp(1.f, e - 10);
  return std::copysign(std::nearbyint(a / ulp) * ulp, f);
}

// The AVX2 + FMA and F16C bodies (vec_ops_avx2.cpp) run from IsaLevel::kAvx2
// on, which has both.
bool HasF16c() {
  static const bool has = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx2;
  return has;
}

bool HasAvx2() {
  static const bool has = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx2;
  return has;
}

}  // namespace

float DotF32(const float* a, const float* b, int64_t n) {
  return HasAvx2() ? vec_internal::DotAvx2(a, b, n) : DotScalar(a, b, n);
}

void AxpyF32(float alpha, const float* x, float* y, int64_t n) {
  if (HasAvx2()) {
    vec_internal::AxpyAvx2(alpha, x, y, n);
  } else {
    AxpyScalar(alpha, x, y, n);
  }
}

void AddF32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void MulF32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= x[i];
}

void DotRows(const float* const* q, int nq, const float* const* rows, int64_t n_rows, int64_t n, float* out) {
  if (HasAvx2() && n % 16 == 0) return vec_internal::DotRowsAvx2(q, nq, rows, n_rows, n, out);
  for (int g = 0; g < nq; ++g) {
    for (int64_t j = 0; j < n_rows; ++j) out[g * n_rows + j] = DotScalar(q[g], rows[j], n);
  }
}

void WeightedRowSum(const float* w, int nq, const float* const* rows, int64_t n_rows, int64_t n,
                    float* const* out) {
  if (HasAvx2() && n % 16 == 0) return vec_internal::WeightedRowSumAvx2(w, nq, rows, n_rows, n, out);
  for (int g = 0; g < nq; ++g) {
    std::memset(out[g], 0, n * sizeof(float));
    for (int64_t j = 0; j < n_rows; ++j) AxpyScalar(w[g * n_rows + j], rows[j], out[g], n);
  }
}

void RoundToHalf(float* x, int64_t n) {
  if (HasF16c()) {
    vec_internal::RoundToHalfF16c(x, n);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = RoundToHalfScalar(x[i]);
  }
}

void FloatToHalfRow(const float* x, int64_t n, uint16_t* out) {
  if (HasF16c()) {
    vec_internal::FloatToHalfRowF16c(x, n, out);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = kernels::FloatToHalf(x[i]);
  }
}

void HalfToFloatRow(const uint16_t* x, int64_t n, float* out) {
  if (HasF16c()) {
    vec_internal::HalfToFloatRowF16c(x, n, out);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = kernels::HalfToFloat(x[i]);
  }
}

void ScaleF32(float alpha, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

}  // namespace ragd::inference
