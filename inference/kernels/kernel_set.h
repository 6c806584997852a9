// The kernel sets (one per instruction set) behind MatMul, and the scalar
// reference functions they are tested against. Internal to inference/kernels
// and its tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inference/ggml_types.h"
#include "inference/kernels/kernels.h"
#include "inference/kernels/packed_weight.h"
#include "inference/kernels/quant_blocks.h"

namespace ragd::inference::kernels {

// How an activation row is stored for a weight type: plain floats (F32, F16,
// BF16 weights), BlockQ8A (legacy 32-blocks) or BlockQ8K (K-quants).
enum class ActKind { kF32, kQ8A, kQ8K, kUnsupported };
ActKind ActKindFor(GgmlType type);
// Bytes of one activation row of n values for `type` (n a multiple of its block).
size_t ActRowBytes(GgmlType type, int64_t n);

// Rows [r0, r1) of `w` times m activation rows (row c at act + c*act_stride,
// in the ActKindFor(w.type) layout): y[c*ldy + r] = dot(W[r], act_c).
// `prepared` is what the set's prepare() returned for these activations.
using MulRowsFn = void (*)(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                           const void* prepared, float* y, int64_t ldy, int64_t r0, int64_t r1);
// Optional per-MatMul step run once, from the calling thread (which may use
// `pool`, possibly null), before mul_rows is spread over the pool (e.g.
// re-laying out the activations for a batched kernel). Returns data owned by
// the calling thread, valid until its next call, or nullptr.
using PrepareFn = const void* (*)(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                                  ThreadPool* pool);

// Optional: re-lays w out for this set's mul_rows into out->lines (see
// packed_weight.h), calling release on each range of w's bytes once read;
// returns false, out untouched, where the set reads w's GGUF blocks as they
// are. mul_rows then receives views whose `packed` is such a weight.
using PackFn = bool (*)(const WeightView& w, const PackReleaseFn& release, PackedWeight* out);

struct KernelSet {
  const char* name;                                                // "scalar", "avx2", "avx512vnni"
  void (*quantize_q8a)(const float* x, int64_t n, BlockQ8A* out);  // n % 32 == 0
  void (*quantize_q8k)(const float* x, int64_t n, BlockQ8K* out);  // n % 256 == 0
  // Dot of one weight row (n values of `type`) with one activation row.
  float (*vec_dot)(GgmlType type, int64_t n, const uint8_t* w_row, const uint8_t* act_row);
  PrepareFn prepare;  // may be null
  MulRowsFn mul_rows;
  PackFn pack = nullptr;
};

extern const KernelSet kScalarKernels;
extern const KernelSet kAvx2Kernels;    // needs AVX2, FMA, F16C
extern const KernelSet kAvx512Kernels;  // needs AVX-512 F/BW/VL/VNNI (+ AVX2/FMA/F16C)

// Kernel sets this CPU can run, best first (scalar always last), whatever
// RAGD_KERNELS says (the tests compare them all).
int SupportedKernelSets(const KernelSet** out, int capacity);
// The set MatMul uses: that of ActiveLevel() (cpu_features.h, dispatch.cpp).
const KernelSet& ActiveKernels();

// MatMul with an explicit kernel set (tests compare the sets through this).
void MatMulWith(const KernelSet& ks, const WeightView& w, const float* x, int64_t m, float* y,
                ThreadPool* pool);
void MatMulSharedWith(const KernelSet& ks, std::span<const MatMulTarget> targets, const float* x, int64_t m,
                      ThreadPool* pool);

// Scalar references, usable by every set as a fallback.
void DequantizeRowRef(GgmlType type, const uint8_t* row, int64_t n, float* out);
void QuantizeQ8ARef(const float* x, int64_t n, BlockQ8A* out);
void QuantizeQ8KRef(const float* x, int64_t n, BlockQ8K* out);
float VecDotRef(GgmlType type, int64_t n, const uint8_t* w_row, const uint8_t* act_row);
void MulRowsRef(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, const void* prepared,
                float* y, int64_t ldy, int64_t r0, int64_t r1);

}  // namespace ragd::inference::kernels
