// Small float vector helpers of the forward passes (attention dot products and
// weighted sums, residual adds, half rounding), used by inference/models. The
// AVX2 + FMA + F16C bodies (vec_ops_avx2.cpp) run when ActiveLevel()
// (cpu_features.h) is kAvx2 or above; the scalar ones otherwise.
#pragma once

#include <cstdint>

namespace ragd::inference {

float DotF32(const float* a, const float* b, int64_t n);         // sum a[i]*b[i]
void AxpyF32(float alpha, const float* x, float* y, int64_t n);  // y += alpha*x
void AddF32(const float* x, float* y, int64_t n);                // y += x
void MulF32(const float* x, float* y, int64_t n);                // y *= x
void ScaleF32(float alpha, float* y, int64_t n);                 // y *= alpha
// Attention building blocks over nq <= 4 query rows sharing the same keys:
// out[g * n_rows + j] = dot(q[g], rows[j]) over n elements.
void DotRows(const float* const* q, int nq, const float* const* rows, int64_t n_rows, int64_t n, float* out);
// out[g][d] = sum_j w[g * n_rows + j] * rows[j][d] for d < n (out overwritten).
void WeightedRowSum(const float* w, int nq, const float* const* rows, int64_t n_rows, int64_t n,
                    float* const* out);
// Rounds each value to the nearest IEEE half (ties to even), kept as float.
void RoundToHalf(float* x, int64_t n);
// The same rounding, stored as halves; and halves back to floats (exact).
void FloatToHalfRow(const float* x, int64_t n, uint16_t* out);
void HalfToFloatRow(const uint16_t* x, int64_t n, float* out);

namespace vec_internal {
float DotAvx2(const float* a, const float* b, int64_t n);
void AxpyAvx2(float alpha, const float* x, float* y, int64_t n);
void RoundToHalfF16c(float* x, int64_t n);
void FloatToHalfRowF16c(const float* x, int64_t n, uint16_t* out);
void HalfToFloatRowF16c(const uint16_t* x, int64_t n, float* out);
void DotRowsAvx2(const float* const* q, int nq, const float* const* rows, int64_t n_rows, int64_t n,
                 float* out);
void WeightedRowSumAvx2(const float* w, int nq, const float* const* rows, int64_t n_rows, int64_t n,
                        float* const* out);
}  // namespace vec_internal

}  // namespace ragd::inference
