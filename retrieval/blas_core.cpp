#include "retrieval/blas_core.h"

#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include <cstdlib>

namespace ragd::retrieval {

const char* BetterBlasCore() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return nullptr;
  if (strcasecmp(BlasCoreName(), "prescott") != 0) return nullptr;  // its own choice stands
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

const char* BlasCoreName() {
  const char* core = openblas_get_corename();
  return core != nullptr ? core : "unknown";
}

void RestartWithBetterBlasCore(char** argv) {
  const char* core = BetterBlasCore();
  if (core == nullptr || argv == nullptr || argv[0] == nullptr) return;
  if (setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the restart failed. The variable stays set (it cannot take
  // effect in this process), so a child that is started would get it.
}

}  // namespace ragd::retrieval
