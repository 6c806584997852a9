// The one dispatch table: for each instruction-set level (cpu_features.h),
// the kernel set behind MatMul and the element-wise set. vec_ops.cpp and
// f16_attention.cpp compile their AVX2 / AVX-512 bodies through function
// attributes and pick them by ActiveLevel() too, so RAGD_KERNELS moves every
// vectorised path at once.
#include <iterator>

#include "inference/kernels/cpu_features.h"
#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"

namespace ragd::inference {
namespace kernels {
namespace {

struct LevelKernels {
  IsaLevel level;
  const KernelSet* matmul;
  const ElementwiseSet* elementwise;
};

// Best first.
constexpr LevelKernels kTable[] = {
    {IsaLevel::kAvx512Vnni, &kAvx512Kernels, &kAvx512Elementwise},
    {IsaLevel::kAvx2, &kAvx2Kernels, &kAvx2Elementwise},
    {IsaLevel::kScalar, &kScalarKernels, &kScalarElementwise},
};

const LevelKernels& Active() {
  static const LevelKernels& active = [&]() -> const LevelKernels& {
    for (const LevelKernels& k : kTable) {
      if (k.level == ActiveLevel()) return k;
    }
    return kTable[std::size(kTable) - 1];
  }();
  return active;
}

}  // namespace

int SupportedKernelSets(const KernelSet** out, int capacity) {
  int n = 0;
  for (const LevelKernels& k : kTable) {
    if (n < capacity && k.level <= SupportedLevel()) out[n++] = k.matmul;
  }
  return n;
}

const KernelSet& ActiveKernels() { return *Active().matmul; }

const ElementwiseSet& ActiveElementwise() { return *Active().elementwise; }

}  // namespace kernels

std::string KernelIsaName() { return kernels::IsaLevelName(kernels::ActiveLevel()); }

}  // namespace ragd::inference
