// The attention arithmetic of llama.cpp's CPU backend with its default F16
// KV cache and without flash attention, in the summation order of its
// single-query (decode) step, for queries already rounded to half precision
// (kept as floats) and keys and values stored as IEEE halves (the F16 KV
// cache's rows). With these, a query row's attention output is bitwise what
// llama.cpp computes for it, whatever the number of query rows in a step
// (each row's result depends only on that row and the keys and values it
// sees). Thread-safe; the AVX2+FMA+F16C and AVX-512 versions are picked at
// run time, the scalar ones give identical results. Up to four query rows
// share each load of a key or value row.
#pragma once

#include <cstdint>

namespace ragd::inference {

// out[g*n_keys + j] = dot(q[g], keys[j]) over n values (n % 64 == 0), summed
// as ggml_vec_dot_f16: four 16-lane accumulators over steps of 64 values
// (lane l of accumulator u takes value 64s + 16u + l), combined as
// (a0+a2)+(a1+a3), then the 16 lanes as ((l+8) then (l+4) then (0+2)+(1+3)).
void DotRowsF16Order(const float* const* q, int nq, const uint16_t* const* keys, int64_t n_keys, int64_t n,
                     float* out);

// Softmax in place over the scores of n visible keys at consecutive positions
// first_pos .. first_pos+n-1 (llama.cpp's soft_max row over its cache slots,
// slot = position, the others masked): exp as llama.cpp's AVX-512 expf
// (polynomial, result ~1 ulp from expf), sums of aligned groups of 16 slots
// added in float in the lane order above, the groups summed in double, then
// multiplied by (float)(1/sum).
void SoftmaxF16Order(float* s, int64_t n, int64_t first_pos);

// out[g][d] = sum_j w[g*n_keys + j] * values[j][d] for d < n (n % 8 == 0),
// keys at positions first_pos+j, summed over positions as ggml_vec_dot_f16
// (position p goes to lane p % 16 of accumulator (p % 64) / 16). out is
// overwritten.
void WeightedRowSumF16Order(const float* w, int nq, const uint16_t* const* values, int64_t n_keys,
                            int64_t first_pos, int64_t n, float* const* out);

// Reads every 64-byte line of rows[j][0 .. n) once (n % 32 == 0), rows in
// order, and nothing else. WeightedRowSumF16Order reads its value rows 64
// positions apart, lane class by lane class: a pattern the hardware
// prefetchers do not follow (and prefetch instructions did not help), so from
// a cold cache every line came in on its own. Streamed in row order first,
// the rows come in at memory speed. From a warm cache it
// is a few us of wasted loads, so callers stream rows they expect to be cold.
void StreamRowsF16(const uint16_t* const* rows, int64_t n_rows, int64_t n);

// llama.cpp's AVX-512 exp (its softmax takes x <= 0, its SwiGLU any x):
// exact same float result.
float ExpF16Order(float x);

}  // namespace ragd::inference
