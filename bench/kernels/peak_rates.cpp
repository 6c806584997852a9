// bench_kernels --peak: how many of the instructions the kernels are built
// from one core issues per second, measured rather than taken from a data
// sheet (a virtual machine's core can differ from its model's). Each loop
// runs 8 or 12 independent chains whose values stay in registers (an empty
// asm statement pins them; without it the compiler keeps the chains in
// memory and the loop times store-to-load forwarding instead), so the rates
// are the core's issue limits, not latencies. Loads read a 16 KiB buffer
// (in L1). A kernel near one of these rates is at that limit.
#include "bench/kernels/peak_rates.h"

#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ragd::bench {
namespace {

#define RAGD_PEAK_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni"), noinline))

alignas(64) int32_t g_buffer[4096];

#define RAGD_R8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define RAGD_PIN8(p)                                                                                 \
  asm volatile(""                                                                                    \
               : "+v"(p##0), "+v"(p##1), "+v"(p##2), "+v"(p##3), "+v"(p##4), "+v"(p##5), "+v"(p##6), \
                 "+v"(p##7))

// The panel tiles' lane step into chain i: vpdpbusd of weights w and
// activation quads a started at lane offsets o, the kMagic subtraction (b),
// the FMA (c). The second form first loads a and o as the one-lane-a-vector
// tile does, two 32-bit broadcasts.
#define RAGD_LANE_STEP(i, w, a, o) \
  f##i = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(o, w, a)), b), c, f##i);
#define RAGD_BROADCAST_LANE_STEP(i, w)                                      \
  {                                                                         \
    __m512i a = _mm512_set1_epi32(p[i]), o = _mm512_set1_epi32(p[8 + (i)]); \
    asm("" : "+v"(a), "+v"(o));                                             \
    RAGD_LANE_STEP(i, w, a, o)                                              \
  }

enum class Mix {
  kFma,             // vfmadd231ps zmm
  kDpbusd,          // vpdpbusd zmm
  kDpbusdFma,       // vpdpbusd then vfmadd231ps on its result (llama.cpp-order lane step)
  kBroadcastDpFma,  // the same fed by a 32-bit broadcast load
  kDpSubFma,        // vpdpbusd, the kMagic subtraction, vfmadd231ps: the Q5_0/Q8_0 panel tiles' lane step
  kLaneStep,        // the same with two 32-bit broadcasts (lane offset, activation quad)
  kLaneTile,        // lane steps as a tile of one lane a vector loads them, 2 activation rows: half a
                    // 64-byte weight load and two 32-bit broadcasts a step
  kLanePairTile,    // as LegacyLanePairTile loads them (two lanes a vector): half a weight load and
                    // one 64-bit broadcast a step
  kLoadZmm,         // 64-byte loads
  kLoadYmm,         // 32-byte loads
  kBroadcast32,     // 32-bit broadcast loads
};

// Operations per second of `mix`, 8 per iteration.
template <Mix kMix>
RAGD_PEAK_TARGET double Rate(int64_t iterations) {
#define RAGD_DECLARE(i)                              \
  __m512 f##i = _mm512_set1_ps(1.0f + 0.001f * (i)); \
  __m512i s##i = _mm512_set1_epi32(i);
  RAGD_R8(RAGD_DECLARE)
#undef RAGD_DECLARE
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  const __m512i w = _mm512_set1_epi8(3);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < iterations; ++k) {
    const int32_t* p = g_buffer + (k & 31) * 128;
    if constexpr (kMix == Mix::kFma) {
#define RAGD_STEP(i) f##i = _mm512_fmadd_ps(f##i, b, c);
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kDpbusd) {
#define RAGD_STEP(i) s##i = _mm512_dpbusd_epi32(s##i, w, w);
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kDpbusdFma) {
#define RAGD_STEP(i) f##i = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(s##i, w, w)), c, f##i);
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kBroadcastDpFma) {
#define RAGD_STEP(i)                                                                       \
  {                                                                                        \
    __m512i a = _mm512_set1_epi32(p[i]);                                                   \
    asm("" : "+v"(a));                                                                     \
    f##i = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(s##i, a, w)), c, f##i); \
  }
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kDpSubFma) {
#define RAGD_STEP(i) RAGD_LANE_STEP(i, w, w, s##i)
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kLaneStep) {
#define RAGD_STEP(i) RAGD_BROADCAST_LANE_STEP(i, w)
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kLaneTile) {
      const __m512i* wp = reinterpret_cast<const __m512i*>(g_buffer + (k & 15) * 128);
#define RAGD_LANE(l, i, j)                                          \
  {                                                                 \
    __m512i wv = _mm512_load_si512(wp + l);                         \
    asm("" : "+v"(wv));                                             \
    RAGD_BROADCAST_LANE_STEP(i, wv) RAGD_BROADCAST_LANE_STEP(j, wv) \
  }
      // Four lanes, each weight vector for both activation rows.
      RAGD_LANE(0, 0, 1) RAGD_LANE(1, 2, 3) RAGD_LANE(2, 4, 5) RAGD_LANE(3, 6, 7)
#undef RAGD_LANE
    } else if constexpr (kMix == Mix::kLanePairTile) {
      const __m512i* wp = reinterpret_cast<const __m512i*>(g_buffer + (k & 15) * 128);
      for (int q = 0; q < 2; ++q) {  // two weight vectors (a lane pair) for both activation rows
        __m512i w0 = _mm512_load_si512(wp + 2 * q), w1 = _mm512_load_si512(wp + 2 * q + 1);
        long long a0, o0, a1, o1;
        std::memcpy(&a0, p + 2 * q, 8);
        std::memcpy(&o0, p + 8 + 2 * q, 8);
        std::memcpy(&a1, p + 16 + 2 * q, 8);
        std::memcpy(&o1, p + 24 + 2 * q, 8);
        __m512i va0 = _mm512_set1_epi64(a0), vo0 = _mm512_set1_epi64(o0);
        __m512i va1 = _mm512_set1_epi64(a1), vo1 = _mm512_set1_epi64(o1);
        asm("" : "+v"(w0), "+v"(w1), "+v"(va0), "+v"(vo0), "+v"(va1), "+v"(vo1));
        if (q == 0) {
          RAGD_LANE_STEP(0, w0, va0, vo0)
          RAGD_LANE_STEP(1, w1, va0, vo0) RAGD_LANE_STEP(2, w0, va1, vo1) RAGD_LANE_STEP(3, w1, va1, vo1)
        } else {
          RAGD_LANE_STEP(4, w0, va0, vo0)
          RAGD_LANE_STEP(5, w1, va0, vo0) RAGD_LANE_STEP(6, w0, va1, vo1) RAGD_LANE_STEP(7, w1, va1, vo1)
        }
      }
    } else if constexpr (kMix == Mix::kLoadZmm) {
#define RAGD_STEP(i) s##i = _mm512_add_epi32(s##i, _mm512_load_si512(p + 16 * (i)));
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else if constexpr (kMix == Mix::kLoadYmm) {
#define RAGD_STEP(i)       \
  s##i = _mm512_add_epi32( \
      s##i, _mm512_castsi256_si512(_mm256_load_si256(reinterpret_cast<const __m256i*>(p + 8 * (i)))));
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    } else {
#define RAGD_STEP(i) s##i = _mm512_add_epi32(s##i, _mm512_set1_epi32(p[3 * (i)]));
      RAGD_R8(RAGD_STEP)
#undef RAGD_STEP
    }
    RAGD_PIN8(f);
    RAGD_PIN8(s);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(iterations) * 8 / seconds;
}

// The best of three runs, in G/s.
template <Mix kMix>
double Best(int64_t iterations) {
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const double rate = Rate<kMix>(iterations) / 1e9;
    if (rate > best) best = rate;
  }
  return best;
}

}  // namespace

void BenchPeakRates(bool quick) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vnni")) {
    std::printf("peak rates: this CPU lacks AVX-512 VNNI; nothing measured\n");
    return;
  }
  const int64_t n = quick ? 5'000'000 : 40'000'000;
  std::printf("instructions one core issues (G/s, registers or L1 only, best of 3):\n");
  std::printf("  zmm FMA                                 %6.2f\n", Best<Mix::kFma>(n));
  std::printf("  zmm vpdpbusd                            %6.2f\n", Best<Mix::kDpbusd>(n));
  std::printf("  zmm vpdpbusd + FMA on its sum (pairs)   %6.2f\n", Best<Mix::kDpbusdFma>(n));
  std::printf("  the pair fed by a 32-bit broadcast load %6.2f\n", Best<Mix::kBroadcastDpFma>(n));
  std::printf("  vpdpbusd, subtraction, FMA (lane steps) %6.2f\n", Best<Mix::kDpSubFma>(n));
  std::printf("  the lane step with its two broadcasts   %6.2f\n", Best<Mix::kLaneStep>(n));
  std::printf("  lane steps, a lane a vector, 2 rows     %6.2f\n", Best<Mix::kLaneTile>(n));
  std::printf("  lane steps, lane pairs, 2 rows          %6.2f\n", Best<Mix::kLanePairTile>(n));
  std::printf("  64-byte loads                           %6.2f\n", Best<Mix::kLoadZmm>(n));
  std::printf("  32-byte loads                           %6.2f\n", Best<Mix::kLoadYmm>(n));
  std::printf("  32-bit broadcast loads                  %6.2f\n", Best<Mix::kBroadcast32>(n));
}

}  // namespace ragd::bench
