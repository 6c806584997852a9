// The choice of OpenBLAS kernels (retrieval/blas_core.h); the restart itself
// is tested through the ragd binary (tests/app/cli_test.cpp, model-info).
#include "retrieval/blas_core.h"

#include <gtest/gtest.h>
#include <strings.h>

#include <cstdlib>
#include <string>

namespace ragd::retrieval {
namespace {

TEST(BlasCore, NamesKernelsOnlyInPlaceOfTheGenericOnes) {
  const char* saved = std::getenv("OPENBLAS_CORETYPE");
  const std::string kept = saved != nullptr ? saved : "";
  unsetenv("OPENBLAS_CORETYPE");
  const char* better = BetterBlasCore();
  if (strcasecmp(BlasCoreName(), "prescott") != 0) {
    EXPECT_EQ(better, nullptr) << "OpenBLAS chose " << BlasCoreName() << " itself";
  } else if (better != nullptr) {
    const std::string b = better;
    EXPECT_TRUE(b == "SkylakeX" || b == "Haswell") << b;
    __builtin_cpu_init();
    EXPECT_TRUE(__builtin_cpu_supports("avx2")) << b << " named on a CPU without AVX2";
  }
  // A variable that is set is the user's (or a restart's) choice: left alone.
  setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_EQ(BetterBlasCore(), nullptr);
  if (saved != nullptr)
    setenv("OPENBLAS_CORETYPE", kept.c_str(), 1);
  else
    unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace
}  // namespace ragd::retrieval
