// One weight row in its GGUF layout times up to four activation rows, for
// every weight type: the kernel set's vec_dot and the fallback mul_rows of
// types without a faster path. The per-type row kernels live with their
// type (q4_0_q5_0_q8_0.h, q4_k_q5_k.h, q6_k.h, f32_f16_bf16.h). Included only
// by the per-instruction-set kernel files; internal linkage.
#pragma once

#include "inference/kernels/x86/f32_f16_bf16.h"
#include "inference/kernels/x86/q4_0_q5_0_q8_0.h"
#include "inference/kernels/x86/q4_k_q5_k.h"
#include "inference/kernels/x86/q6_k.h"

namespace ragd::inference::kernels {
namespace {

using DotTileFn = void (*)(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out);

template <int C>
DotTileFn DotTileFor(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return DotTileFloat<GgmlType::kF32, C>;
    case GgmlType::kF16:
      return DotTileFloat<GgmlType::kF16, C>;
    case GgmlType::kBF16:
      return DotTileFloat<GgmlType::kBF16, C>;
    case GgmlType::kQ4_0:
      return DotTileLegacy<GgmlType::kQ4_0, C>;
    case GgmlType::kQ4_1:
      return DotTileLegacy<GgmlType::kQ4_1, C>;
    case GgmlType::kQ5_0:
      return DotTileLegacy<GgmlType::kQ5_0, C>;
    case GgmlType::kQ5_1:
      return DotTileLegacy<GgmlType::kQ5_1, C>;
    case GgmlType::kQ8_0:
      return DotTileLegacy<GgmlType::kQ8_0, C>;
    case GgmlType::kQ4_K:
      return DotTileQ45K<GgmlType::kQ4_K, C>;
    case GgmlType::kQ5_K:
      return DotTileQ45K<GgmlType::kQ5_K, C>;
    case GgmlType::kQ6_K:
      return DotTileQ6K<C>;
    default:
      return nullptr;
  }
}

float VecDotX86(GgmlType type, int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  float out;
  DotTileFor<1>(type)(n, w_row, &act_row, &out);
  return out;
}

// Rows [r0, r1) times all m activation rows, up to 4 activation rows per pass.
void MulRowsDirect(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                   const void* /*prepared*/, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const DotTileFn fns[4] = {DotTileFor<1>(w.type), DotTileFor<2>(w.type), DotTileFor<3>(w.type),
                            DotTileFor<4>(w.type)};
  for (int64_t c0 = 0; c0 < m; c0 += 4) {
    const int cols = static_cast<int>(m - c0 < 4 ? m - c0 : 4);
    const uint8_t* acts[4];
    for (int c = 0; c < cols; ++c) acts[c] = act + static_cast<size_t>(c0 + c) * act_stride;
    for (int64_t r = r0; r < r1; ++r) {
      float out[4];
      fns[cols - 1](w.n_in, w.data + static_cast<size_t>(r) * w.row_bytes, acts, out);
      for (int c = 0; c < cols; ++c) y[(c0 + c) * ldy + r] = out[c];
    }
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
