// The issue rates of the instructions the x86 kernels are built from, on
// one core (peak_rates.cpp).
#pragma once

namespace ragd::bench {

// Prints them; nothing where the CPU lacks AVX-512 VNNI.
void BenchPeakRates(bool quick);

}  // namespace ragd::bench
