// Vector versions of the element-wise operations, one set per instruction set,
// chosen together with the matmul kernel set. Internal to inference/kernels.
#pragma once

#include <cstdint>

namespace ragd::inference::kernels {

struct ElementwiseSet {
  void (*gelu_tanh)(float* x, int64_t n);
  void (*softmax)(float* x, int64_t n);
  int64_t (*argmax)(const float* x, int64_t n, float* max);
  int64_t (*find_at_least)(const float* x, int64_t begin, int64_t n, float t);
  void (*swiglu)(float* gate, const float* up, int64_t n);
};

void GeluTanhRef(float* x, int64_t n);
void SoftmaxRef(float* x, int64_t n);
int64_t ArgmaxRef(const float* x, int64_t n, float* max);
int64_t FindAtLeastRef(const float* x, int64_t begin, int64_t n, float t);
void SwiGluRef(float* gate, const float* up, int64_t n);

extern const ElementwiseSet kScalarElementwise;
extern const ElementwiseSet kAvx2Elementwise;
extern const ElementwiseSet kAvx512Elementwise;
// The set of ActiveLevel() (cpu_features.h, dispatch.cpp).
const ElementwiseSet& ActiveElementwise();

}  // namespace ragd::inference::kernels
