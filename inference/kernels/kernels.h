// CPU kernels of the inference engine: quantized matrix products, a fixed
// thread pool, and the element-wise operations of a transformer layer.
//
// Weights stay in their GGUF block layout (never dequantized as a whole);
// activations are quantized once per row to the weight type's dot-product
// partner (Q8_0 for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0, Q8_K for the K-quants) and
// multiplied with integer dot products. Each SIMD variant (AVX2+FMA,
// AVX-512 VNNI) has a scalar reference it is tested against; the best variant
// the CPU supports is chosen once at run time, for every kernel together (the
// environment variable RAGD_KERNELS=scalar|avx2|avx512vnni forces a supported
// one, for testing).
// All functions here are thread-safe unless stated otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>

#include "inference/ggml_types.h"

namespace ragd::inference {

// A fixed pool of worker threads. Run() splits [0, n) into size() contiguous
// ranges (empty ones are skipped), calls fn once per range, and returns when
// all are done. The calling thread takes part; it also runs the range of a
// worker that has not started yet (a busy machine), so `thread` is the index
// of the range (0..size()-1): unique among concurrent calls, usable to pick
// per-thread scratch, but not an OS thread identity. Workers spin briefly
// after each Run() (cheap for ~100 runs per token), then sleep.
// Not re-entrant: one Run() at a time per pool, from one thread at a time.
class ThreadPool {
 public:
  // n_threads <= 0: one per core. `nice` (0..19) is the workers' scheduling
  // niceness: above 0, other threads of the process (request handling) take
  // the CPU from them when both want it.
  explicit ThreadPool(int n_threads, int nice = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // fn(begin, end, thread_index) over a partition of [0, n).
  void Run(int64_t n, const std::function<void(int64_t begin, int64_t end, int thread)>& fn);
  // Like Run(), but hands [0, n) out in chunks of `grain` (the last may be
  // shorter) to whichever thread is free, so a thread slowed down by a busy
  // machine does less of the work. fn may be called several times per thread;
  // `thread` identifies the executing thread (0 = caller, < size()).
  void RunDynamic(int64_t n, int64_t grain,
                  const std::function<void(int64_t begin, int64_t end, int thread)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sets the scheduling niceness (0..19) of the calling thread only.
void SetCurrentThreadNice(int nice);

namespace kernels {
struct PackedWeight;
struct PackedWeightDeleter {
  void operator()(PackedWeight* p) const;
};
}  // namespace kernels

// The float summation order a quantized product may take (see MatMul).
// kLlamaCpp: that of llama.cpp's x86 kernels, bitwise their results.
// kBlockSums: each block's integer dot product taken whole, then scaled and
// added to one float sum per output block by block: about a third of
// llama.cpp's float work per output, within float rounding of its result
// (~1e-6 relative). For products whose rounding no later layer amplifies
// (the tied output of Gemma 3); the kernels that have no such path use
// kLlamaCpp.
enum class SumOrder { kLlamaCpp, kBlockSums };

// A weight matrix in GGUF layout: n_out rows of n_in elements (GGUF ne[0] =
// n_in, ne[1] = n_out), each row `row_bytes` long; `packed`, when set, is the
// same matrix re-laid out by PackWeight, which MatMul and DequantizeRow read
// instead of `data` where the kernel set that made it is the one running.
struct WeightView {
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;
  int64_t n_in = 0;
  int64_t n_out = 0;
  size_t row_bytes = 0;
  const kernels::PackedWeight* packed = nullptr;
  SumOrder order = SumOrder::kLlamaCpp;
};

// Called with each range [begin, end) of a weight's GGUF bytes once packing
// has read it (e.g. to drop those pages of a mapped file from memory).
using PackReleaseFn = std::function<void(const uint8_t* begin, const uint8_t* end)>;
using PackedWeightPtr = std::unique_ptr<kernels::PackedWeight, kernels::PackedWeightDeleter>;

// w re-laid out, once at load, for the active kernels' products, or null
// where they read w's GGUF blocks as they are. On AVX-512 VNNI: Q8_0, Q5_0,
// Q4_K and Q6_K as 16-row panels (about the size of the blocks), so that no
// product repacks them per step (the tied output matrix and every layer
// matrix of Gemma 3: see bench_kernels --batch). The result must outlive
// every view pointing to it; products are bitwise those of the GGUF layout
// (in the order kLlamaCpp; see SumOrder). The packed bytes come from
// `memory` (null: HugePageResource(), common/huge_pages.h), which must
// outlive the result.
PackedWeightPtr PackWeight(const WeightView& w, const PackReleaseFn& release = {},
                           std::pmr::memory_resource* memory = nullptr);

// y[i][o] = sum_k x[i][k] * W[o][k] for i < m: x is m rows of n_in floats,
// y is m rows of n_out floats (row-major), y must not alias x. `pool` may be
// null (single thread). n_in must be a multiple of the type's block size
// (32, or 256 for K-quants). For quantized types each x row is first quantized
// to 8 bits (per 32 values, or per 256 for K-quants) exactly as llama.cpp
// does, so results differ from a float product by ~0.1-1%. On x86 (AVX2 and
// AVX-512 sets) the float summation order per output is that of llama.cpp's
// one-token kernels for Q5_0, Q8_0, Q6_K and Q4_K (bitwise equal results;
// Q4_0 in the Q5_0 order); the other types use ragd's own order. Q4_0, Q5_0,
// Q8_0 and Q6_K use tiles of weight rows x activation rows for every m (on
// AVX-512, Q4_0/Q5_0/Q8_0 batches of 32 or more rows repack 16-row panels,
// and packed Q8_0/Q5_0/Q4_K/Q6_K weights are read in their panels for every m);
// the other K/legacy types stream weight rows for small m and repack panels
// of 16 (8 on AVX2) weight rows for larger m. Row i of y depends only on row i of x
// and on w: it is bitwise the same whatever m, the other rows, the pool or
// its size (every path takes the same float steps per output; a batching
// scheduler relies on this). It may differ between kernel sets. With
// w.order == kBlockSums, packed Q8_0 weights on AVX-512 are summed in that
// order (every m alike); everything else keeps the order above.
// Thread-safe for concurrent calls that use different pools (or none).
void MatMul(const WeightView& w, const float* x, int64_t m, float* y, ThreadPool* pool);

// One weight's product for MatMulShared: y = x * w^T (m rows of w->n_out).
struct MatMulTarget {
  const WeightView* w;
  float* y;
};
// MatMul of the same m input rows by several weights (a layer's q, k and v;
// its gate and up): the rows are quantized once and all the products share
// one pass over the pool, so no thread waits between them. Each y is bitwise
// what MatMul gives. Weights of different input widths or activation kinds,
// or more than four, are multiplied one after the other; a weight whose
// kernels prepare the activations for its type (K-quant panels for larger m)
// has a pass of its own, on the shared quantized rows.
void MatMulShared(std::span<const MatMulTarget> targets, const float* x, int64_t m, ThreadPool* pool);

// Dequantizes row `row` of `w` into n_in floats (embedding look-up); exact
// (the scalar reference, bit-identical on every CPU; from the packed copy
// when there is one).
void DequantizeRow(const WeightView& w, int64_t row, float* out);

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]; out may alias x. As
// llama.cpp computes it: squares summed in double, mean and scale in float,
// then (x*scale)*weight.
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out);

// RmsNorm of each of `rows` consecutive rows of n values (out may alias x),
// several rows at a time: the same results, faster than one by one.
void RmsNormRows(const float* x, const float* weight, int64_t rows, int64_t n, float eps, float* out);

// NEOX-style rotary embedding of one head in place: element i pairs with
// i + head_dim/2, angle pos * base^(-2i/head_dim). The angles are computed
// as llama.cpp does (float: theta_0 = pos, theta_{i+1} = theta_i *
// base^(-2/head_dim), then cosf/sinf) and rotated with its roundings
// (a' = fma(a, cos, -(b*sin)), b' = fma(a, sin, b*cos)): bitwise its result.
void RopeNeox(float* head, int64_t head_dim, int64_t pos, float base);

// A model's rotary embedding, as llama.cpp's rope types and options name it.
struct RopeSpec {
  float base = 10000.f;                 // frequency base (rope.freq_base)
  float freq_scale = 1.f;               // linear scaling: angles times this (1 / rope.scaling.factor)
  const float* freq_factors = nullptr;  // per pair, angles divided by it (Llama 3's rope_freqs), or null
  bool neox = true;                     // pairs (i, i + d/2); false: (2i, 2i+1), LLAMA_ROPE_TYPE_NORM
};
// Rotates one head in place: pair i by angle pos * base^(-2i/head_dim) /
// freq_factors[i] * freq_scale, with RopeNeox's roundings.
void Rope(float* head, int64_t head_dim, int64_t pos, const RopeSpec& spec);

// In-place softmax over n values (-inf entries become 0; at least one must be
// finite). Vectorized exp, relative error ~1e-6.
void Softmax(float* x, int64_t n);

// In-place x = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), vectorized
// (absolute error < 2e-6 + 2e-6|y|).
void GeluTanh(float* x, int64_t n);

// gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + exp(-x)): the gated
// feed-forward of Llama-family models, over one row of n values. On x86 with
// llama.cpp's roundings (its AVX-512 ggml_vec_swiglu_f32: the vector exp of
// ggml on groups of 16 values from the start of the row, libm's expf on the
// last n % 16), bitwise its result; elsewhere libm's expf throughout.
void SwiGlu(float* gate, const float* up, int64_t n);

// In-place GELU (tanh form) the way llama.cpp's CPU backend computes it: x
// rounded to half, looked up in a table of gelu(half) rounded to half
// (x <= -10 gives 0, x >= 10 gives x). Matches llama.cpp bit for bit; its
// error against GeluTanh is that of half precision (~1e-3 relative).
void GeluTanhHalf(float* x, int64_t n);

// Index of the largest of x[0..n) (the first one on ties; NaN never
// counts), its value in *max; 0 and -inf when no value is above -inf.
// Vectorized; the same index on every kernel set.
int64_t Argmax(const float* x, int64_t n, float* max);

// The first i in [begin, n) with x[i] >= t (NaN never is), or n. Vectorized.
int64_t FindAtLeast(const float* x, int64_t begin, int64_t n, float t);

// Name of the kernel set chosen for this CPU ("avx512vnni", "avx2", "scalar").
std::string KernelIsaName();

}  // namespace ragd::inference
