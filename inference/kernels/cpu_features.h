// The one place that asks the CPU which instructions it has, and the one
// place that reads RAGD_KERNELS. Every vectorised path of inference/kernels
// (matrix products, element-wise operations, f16 attention, vec_ops) runs at
// ActiveLevel(), so RAGD_KERNELS=scalar|avx2|avx512vnni moves all of them
// together. Internal to inference/kernels and its tests and benchmarks.
// Thread-safe: the probe and the choice are made once, on first use.
#pragma once

namespace ragd::inference::kernels {

// What this CPU reports (cpuid, through __builtin_cpu_supports).
struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
};
const CpuFeatures& HostCpu();

// Instruction-set levels of the kernels, each containing the one before:
// kAvx2 needs AVX2, FMA and F16C; kAvx512Vnni adds AVX-512 F, BW, VL, DQ and
// VNNI.
enum class IsaLevel { kScalar = 0, kAvx2 = 1, kAvx512Vnni = 2 };

// The highest level HostCpu() runs.
IsaLevel SupportedLevel();
// The level every kernel uses: SupportedLevel(), or the level RAGD_KERNELS
// names when the CPU supports it (an unknown or unsupported name is ignored).
IsaLevel ActiveLevel();
// "scalar", "avx2", "avx512vnni" (the names RAGD_KERNELS takes).
const char* IsaLevelName(IsaLevel level);

}  // namespace ragd::inference::kernels
