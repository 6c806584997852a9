// OpenBLAS's kernels for the CPU it runs on.
//
// Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels by the CPU's
// model number when the library loads. CPUs newer than that release
// (Emerald Rapids, family 6 model 0xCF, for one) get its generic SSE3
// "Prescott" kernels, several times slower on the embedding model's products
// than its AVX-512 ones (figures in bench/README.md). The OPENBLAS_CORETYPE
// variable names the kernels to use instead, but the library reads it only
// while it loads, before main(): so a program sets it and starts itself again.
#pragma once

namespace ragd::retrieval {

// The OPENBLAS_CORETYPE this process should run with: "SkylakeX" (AVX-512
// F/BW/DQ/VL) or "Haswell" (AVX2 and FMA) when OpenBLAS fell back to its
// generic kernels on a CPU that has those instructions; nullptr when it chose
// by itself, when OPENBLAS_CORETYPE is already set, or when the CPU has
// neither.
const char* BetterBlasCore();

// The kernels OpenBLAS runs in this process ("SkylakeX", "Haswell", "Prescott"...).
const char* BlasCoreName();

// When BetterBlasCore() names one: sets OPENBLAS_CORETYPE and executes this
// program again (/proc/self/exe) with the same arguments. Returns only when
// there is nothing to change or the restart failed (the process then goes on
// with the kernels it has). Call first thing in main().
void RestartWithBetterBlasCore(char** argv);

}  // namespace ragd::retrieval
