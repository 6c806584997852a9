// CPU kernels of the inference engine: quantized matrix products, a fixed
// thread pool, and the element-wise operations of a transformer layer.
//
// Weights stay in their GGUF block layout (never dequantized as a whole);
// activations are quantized once per row to the weight type's dot-product
// partner (Q8_0 for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0, Q8_K for the K-quants) and
// multiplied with integer dot products. Each SIMD variant (AVX2+FMA,
// AVX-512 VNNI) has a scalar reference it is tested against; the best variant
// the CPU supports is chosen once at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "inference/ggml_types.h"

namespace ragd::inference {

// A fixed pool of worker threads. Run() splits [0, n) into contiguous ranges,
// one per thread (the calling thread takes part), and returns when all are
// done. Not re-entrant: one Run() at a time per pool.
class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads <= 0: one per core
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // fn(begin, end, thread_index) over a partition of [0, n).
  void Run(int64_t n, const std::function<void(int64_t begin, int64_t end, int thread)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A weight matrix in GGUF layout: n_out rows of n_in elements (GGUF ne[0] =
// n_in, ne[1] = n_out), each row `row_bytes` long.
struct WeightView {
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;
  int64_t n_in = 0;
  int64_t n_out = 0;
  size_t row_bytes = 0;
};

// y[i][o] = sum_k x[i][k] * W[o][k] for i < m: x is m rows of n_in floats,
// y is m rows of n_out floats (row-major). `pool` may be null (single thread).
void MatMul(const WeightView& w, const float* x, int64_t m, float* y, ThreadPool* pool);

// Dequantizes row `row` of `w` into n_in floats (embedding look-up).
void DequantizeRow(const WeightView& w, int64_t row, float* out);

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]; out may alias x.
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out);

// NEOX-style rotary embedding of one head in place: element i pairs with
// i + head_dim/2, angle pos * base^(-2i/head_dim).
void RopeNeox(float* head, int64_t head_dim, int64_t pos, float base);

// In-place softmax over n values.
void Softmax(float* x, int64_t n);

// In-place x = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
void GeluTanh(float* x, int64_t n);

// Name of the kernel set chosen for this CPU ("avx512vnni", "avx2", "scalar").
std::string KernelIsaName();

}  // namespace ragd::inference
