// Element-wise kernels of the BERT encoder (retrieval/bert.cpp), on row-major
// float matrices of `rows` x `n`. Internal to retrieval/.
//
// Each kernel is compiled for AVX-512, AVX2+FMA and baseline x86-64 and the
// best one for the running CPU is picked at load time; results agree between
// the variants to float rounding. Pure functions of their arguments: safe to
// call from many threads on disjoint outputs.
#pragma once

namespace ragd::retrieval::kernels {

// y[i][j] += b[j]
void AddBias(float* y, int rows, int n, const float* b);

// x[i][j] = gelu(x[i][j] + b[j]), the exact (erf) GELU.
void BiasGelu(float* x, int rows, int n, const float* b);

// x[i] = LayerNorm(x[i] + r[i] + r_bias) * g + beta; r and r_bias may both be
// null (plain LayerNorm).
void AddLayerNorm(float* x, const float* r, const float* r_bias, int rows, int n, const float* g,
                  const float* beta, float eps);

// Row-wise softmax in place.
void Softmax(float* s, int rows, int n);

}  // namespace ragd::retrieval::kernels
