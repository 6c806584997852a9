// AVX2 + FMA + F16C kernel set (this file is compiled with those flags only
// and reached through the run-time dispatch in dispatch.cpp). Where each
// weight type is multiplied:
//   Q4_0 Q5_0 Q8_0   x86/q4_0_q5_0_q8_0.h (every batch size)
//   Q4_K Q5_K        x86/q4_k_q5_k.h (rows, lanes), x86/q4_k_q5_k_avx2.h (panels)
//   Q4_1 Q5_1        as Q4_K / Q5_K (the same panel and lane kernels)
//   Q6_K             x86/q6_k.h (every batch size)
//   F32 F16 BF16     x86/f32_f16_bf16.h
// and the activations are quantized in x86/quantize_q8.h.
#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"
#include "inference/kernels/x86/elementwise.h"
#include "inference/kernels/x86/q4_k_q5_k_avx2.h"
#include "inference/kernels/x86/quantize_q8.h"
#include "inference/kernels/x86/row_dot.h"

namespace ragd::inference::kernels {
namespace {

// From this many activation rows on, repacking 8-row panels pays off.
constexpr int64_t kPanelMinBatch = 4;

const void* PrepareAvx2(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                        ThreadPool* pool) {
  if (m < kPanelMinBatch || IsOffsetLegacy(w.type) || w.type == GgmlType::kQ6_K) return nullptr;
  return PreparePanelActs8(w.type, act, act_stride, m, w.n_in, pool);
}

void MulRowsAvx2(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m, const void* prepared,
                 float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if (IsOffsetLegacy(w.type)) {
    MulRowsLegacy(w, act, act_stride, m, y, ldy, r0, r1);  // llama.cpp's order, any m
  } else if (w.type == GgmlType::kQ6_K) {
    MulRowsQ6K(w, act, act_stride, m, y, ldy, r0, r1);  // llama.cpp's order, any m
  } else if (prepared != nullptr) {
    MulRowsPanel8(w, *static_cast<const PreparedActs*>(prepared), m, y, ldy, r0, r1);
  } else if (HasLaneKernel(w.type)) {
    MulRowsLanes(w, act, act_stride, m, y, ldy, r0, r1);  // bitwise the panel's results
  } else {
    MulRowsDirect(w, act, act_stride, m, prepared, y, ldy, r0, r1);
  }
}

}  // namespace

const KernelSet kAvx2Kernels = {"avx2", QuantizeQ8AX86, QuantizeQ8KX86, VecDotX86, PrepareAvx2, MulRowsAvx2};
const ElementwiseSet kAvx2Elementwise = {GeluTanhX86, SoftmaxX86, ArgmaxX86, FindAtLeastX86, SwiGluX86};

}  // namespace ragd::inference::kernels
