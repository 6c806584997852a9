#include "inference/kernels/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ragd::inference::kernels {

const CpuFeatures& HostCpu() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    // CPUID directly: clang before 15 does not know "f16c" in __builtin_cpu_supports.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    f.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vl = __builtin_cpu_supports("avx512vl");
    f.avx512dq = __builtin_cpu_supports("avx512dq");
    f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
    return f;
  }();
  return features;
}

IsaLevel SupportedLevel() {
  const CpuFeatures& f = HostCpu();
  if (!(f.avx2 && f.fma && f.f16c)) return IsaLevel::kScalar;
  if (!(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni)) return IsaLevel::kAvx2;
  return IsaLevel::kAvx512Vnni;
}

const char* IsaLevelName(IsaLevel level) {
  switch (level) {
    case IsaLevel::kAvx512Vnni:
      return "avx512vnni";
    case IsaLevel::kAvx2:
      return "avx2";
    case IsaLevel::kScalar:
      break;
  }
  return "scalar";
}

IsaLevel ActiveLevel() {
  static const IsaLevel level = [] {
    const IsaLevel best = SupportedLevel();
    if (const char* want = std::getenv("RAGD_KERNELS")) {
      for (int l = 0; l <= static_cast<int>(best); ++l) {
        const auto level = static_cast<IsaLevel>(l);
        if (std::strcmp(IsaLevelName(level), want) == 0) return level;
      }
    }
    return best;
  }();
  return level;
}

}  // namespace ragd::inference::kernels
