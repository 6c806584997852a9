// AVX-512 F/BW/VL + VNNI kernel set (this file is compiled with those flags
// only and reached through the run-time dispatch in dispatch.cpp). Where each
// weight type is multiplied:
//   Q4_0 Q5_0 Q8_0   x86/q4_0_q5_0_q8_0.h (rows, small batches),
//                    x86/q4_0_q5_0_q8_0_avx512.h (16-row panels, packed weights)
//   Q4_K Q5_K        x86/q4_k_q5_k.h (rows, lanes), x86/q4_k_q5_k_avx512.h (panels)
//   Q4_1 Q5_1        as Q4_K / Q5_K (the same panel and lane kernels)
//   Q6_K             x86/q6_k.h (rows), x86/q6_k_avx512.h (packed weights)
//   F32 F16 BF16     x86/f32_f16_bf16.h
// and the activations are quantized in x86/quantize_q8.h.
#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"
#include "inference/kernels/x86/elementwise.h"
#include "inference/kernels/x86/q4_0_q5_0_q8_0_avx512.h"
#include "inference/kernels/x86/q4_k_q5_k_avx512.h"
#include "inference/kernels/x86/q6_k_avx512.h"
#include "inference/kernels/x86/quantize_q8.h"
#include "inference/kernels/x86/row_dot.h"

namespace ragd::inference::kernels {
namespace {

// K-quants: from this many activation rows on, repacking 16-row panels pays
// off (at 2 and 3 rows panels gain nothing). Both paths give bitwise the same
// rows.
constexpr int64_t kPanelMinBatch = 4;
// Q4_0/Q5_0/Q8_0: from this many rows on, 16-row panels beat row pairs, whose
// weight loads stream in spread over their compute. Both give bitwise the
// same rows.
constexpr int64_t kLegacyPanelMinBatch = 32;

// A weight read in 16-row panels packed at load for every m (Q4_K): its
// activations are always prepared for the panel kernel.
bool InPackedPanels(const WeightView& w) { return w.packed != nullptr && w.packed->type == GgmlType::kQ4_K; }

// Q4_K, Q5_0, Q6_K and Q8_0 weights are re-laid out at load for the panel
// kernels above (packed_weight.h).
bool PackAvx512(const WeightView& w, const PackReleaseFn& release, PackedWeight* out) {
  if (!HasPackedPanels(w.type)) return false;
  PackPanels(w, release, out);
  return true;
}

const void* PrepareAvx512(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                          ThreadPool* pool) {
  if (InPackedPanels(w)) return PreparePanelActs(w.type, act, act_stride, m, w.n_in, pool);
  if (m < kPanelMinBatch || IsOffsetLegacy(w.type) || w.type == GgmlType::kQ6_K) return nullptr;
  return PreparePanelActs(w.type, act, act_stride, m, w.n_in, pool);
}

void MulRowsAvx512(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                   const void* prepared, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if (InPackedPanels(w)) {
    MulRowsPackedPanel(w, *static_cast<const PreparedActs*>(prepared), m, y, ldy, r0, r1);  // any m
  } else if (w.packed != nullptr && w.packed->type == GgmlType::kQ6_K) {
    MulRowsPackedQ6K(w, act, act_stride, m, y, ldy, r0, r1);  // bitwise MulRowsQ6K's rows, any m
  } else if (w.packed != nullptr) {
    MulRowsPacked(w, act, act_stride, m, y, ldy, r0, r1);  // w.order (llama.cpp's or block sums), any m
  } else if (IsOffsetLegacy(w.type) && m >= kLegacyPanelMinBatch) {
    MulRowsLegacyPanel(w, act, act_stride, m, y, ldy, r0, r1);  // llama.cpp's order, bitwise as below
  } else if (IsOffsetLegacy(w.type)) {
    MulRowsLegacy(w, act, act_stride, m, y, ldy, r0, r1);  // llama.cpp's order, any m
  } else if (w.type == GgmlType::kQ6_K) {
    MulRowsQ6K(w, act, act_stride, m, y, ldy, r0, r1);  // llama.cpp's order, any m
  } else if (prepared != nullptr) {
    MulRowsPanel(w, *static_cast<const PreparedActs*>(prepared), m, y, ldy, r0, r1);
  } else if (HasLaneKernel(w.type)) {
    MulRowsLanes(w, act, act_stride, m, y, ldy, r0, r1);  // bitwise the panel's results
  } else {
    MulRowsDirect(w, act, act_stride, m, prepared, y, ldy, r0, r1);
  }
}

}  // namespace

const KernelSet kAvx512Kernels = {"avx512vnni",  QuantizeQ8AX86, QuantizeQ8KX86, VecDotX86,
                                  PrepareAvx512, MulRowsAvx512,  PackAvx512};
const ElementwiseSet kAvx512Elementwise = {GeluTanhX86, SoftmaxX86, ArgmaxX86, FindAtLeastX86, SwiGluAvx512};

}  // namespace ragd::inference::kernels
