// llama.cpp-order attention arithmetic (see f16_attention.h): scalar versions
// (std::fma, bitwise the instruction) and AVX2+FMA / AVX-512 ones compiled
// through function attributes, used at those levels of ActiveLevel()
// (cpu_features.h).
#include "inference/kernels/f16_attention.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "inference/kernels/cpu_features.h"
#include "inference/kernels/quant_blocks.h"
#include "inference/kernels/x86/exp.h"

namespace ragd::inference {
namespace {

using kernels::HalfToFloat;

bool HasAvx2FmaF16c() {
  static const bool has = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx2;
  return has;
}

// The 16-lane sum of _mm512_reduce_add_ps (GCC): pairs (l, l+8), then
// (l, l+4), then (0+2) + (1+3).
float Reduce16(const float* v) {
  float t8[8], t4[4];
  for (int i = 0; i < 8; ++i) t8[i] = v[i + 8] + v[i];
  for (int i = 0; i < 4; ++i) t4[i] = t8[i + 4] + t8[i];
  return (t4[0] + t4[2]) + (t4[1] + t4[3]);
}

// The four 16-lane accumulators of ggml_vec_dot_f16 to one value.
float Combine64(const float* acc /* [4][16] */) {
  float x[16];
  for (int l = 0; l < 16; ++l) x[l] = (acc[l] + acc[32 + l]) + (acc[16 + l] + acc[48 + l]);
  return Reduce16(x);
}

float DotScalar(const uint16_t* a, const float* b, int64_t n) {
  float acc[64] = {};
  for (int64_t i = 0; i < n; i += 64) {
    for (int k = 0; k < 64; ++k) acc[k] = std::fma(HalfToFloat(a[i + k]), b[i + k], acc[k]);
  }
  return Combine64(acc);
}

#define RAGD_F16_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RAGD_F16_AVX512 __attribute__((target("avx512f,avx512dq,avx2,fma,f16c")))

// Eight halves (16 bytes) or sixteen (32 bytes) to floats.
RAGD_F16_AVX2 inline __m256 Load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
RAGD_F16_AVX512 inline __m512 Load16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

__attribute__((target("avx2,fma"))) inline float Reduce16Avx2(__m256 lo, __m256 hi) {
  const __m256 t8 = _mm256_add_ps(hi, lo);
  const __m128 t4 = _mm_add_ps(_mm256_extractf128_ps(t8, 1), _mm256_castps256_ps128(t8));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));  // (0+2), (1+3)
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

// The score kernels ask for key row j + kKeysAhead while they multiply row
// j: the hardware prefetchers do not run ahead of a walk through row
// pointers. Since the AVX-512 kernel takes two keys per pass, 16 rows ahead
// beats 8 and 32.
constexpr int64_t kKeysAhead = 16;

inline void PrefetchRow(const uint16_t* row, int64_t n) {
  for (int64_t i = 0; i < n; i += 32) _mm_prefetch(reinterpret_cast<const char*>(row + i), _MM_HINT_T0);
}

// NQ query rows against every key (DotRowsF16Order's order), each key row
// loaded once for all of them. Per query row, eight 8-lane accumulators:
// acc[k] takes values 64s + 8k .. 64s + 8k + 7, so acc[2u] and acc[2u + 1]
// are the low and high lanes of ggml's accumulator u; then the 16 lanes
// (acc0+acc4)+(acc2+acc6) and (acc1+acc5)+(acc3+acc7) are reduced. The
// accumulators are run two at a time, in those first pairs, so that the
// NQ rows' 2 x NQ chains fit the registers.
template <int NQ>
RAGD_F16_AVX2 void DotKeysAvx2(const float* const* q, const uint16_t* const* keys, int64_t n_keys, int64_t n,
                               float* out) {
  static constexpr int kPairs[4][2] = {{0, 4}, {2, 6}, {1, 5}, {3, 7}};
  for (int64_t j = 0; j < n_keys; ++j) {
    const uint16_t* a = keys[j];
    if (j + kKeysAhead < n_keys) PrefetchRow(keys[j + kKeysAhead], n);
    __m256 pair_sum[4][NQ];
    for (int p = 0; p < 4; ++p) {
      const int o0 = 8 * kPairs[p][0], o1 = 8 * kPairs[p][1];
      __m256 x[NQ], y[NQ];
      for (int g = 0; g < NQ; ++g) x[g] = y[g] = _mm256_setzero_ps();
      for (int64_t i = 0; i < n; i += 64) {
        const __m256 a0 = Load8(a + i + o0), a1 = Load8(a + i + o1);
        for (int g = 0; g < NQ; ++g) {
          x[g] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(q[g] + i + o0), x[g]);
          y[g] = _mm256_fmadd_ps(a1, _mm256_loadu_ps(q[g] + i + o1), y[g]);
        }
      }
      for (int g = 0; g < NQ; ++g) pair_sum[p][g] = _mm256_add_ps(x[g], y[g]);
    }
    for (int g = 0; g < NQ; ++g) {
      out[g * n_keys + j] = Reduce16Avx2(_mm256_add_ps(pair_sum[0][g], pair_sum[1][g]),
                                         _mm256_add_ps(pair_sum[2][g], pair_sum[3][g]));
    }
  }
}

bool HasAvx512() {
  static const bool has = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx512Vnni;
  return has;
}

// The 16 lanes of v summed as Reduce16 (the same pairs, so the same result).
__attribute__((target("avx512f,avx512dq,avx2,fma"))) inline float Reduce16Avx512(__m512 v) {
  const __m256 lo = _mm512_maskz_extractf32x8_ps(0xFF, v, 0), hi = _mm512_maskz_extractf32x8_ps(0xFF, v, 1);
  const __m256 t8 = _mm256_add_ps(hi, lo);
  const __m128 t4 = _mm_add_ps(_mm256_extractf128_ps(t8, 1), _mm256_castps256_ps128(t8));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

// Reduce16Avx512 of 16 vectors at once, key k = x[k]: the same lanes added
// in the same pairs (so the same 16 sums), as a transposed tree: each level
// adds two half-vectors of two keys in one instruction. Lane m of the
// result is key m's sum.
RAGD_F16_AVX512 inline __m512 Reduce16x16(const float (*x)[16]) {
  __m512 y[8], z[4], w[2];
  for (int k = 0; k < 8; ++k) {  // lanes 0-7: t8 of key 2k, 8-15: t8 of key 2k+1
    const __m512 a = _mm512_load_ps(x[2 * k]), b = _mm512_load_ps(x[2 * k + 1]);
    y[k] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  }
  for (int k = 0; k < 4; ++k) {  // 128-bit block j: t4 of key 4k + j
    z[k] = _mm512_add_ps(_mm512_shuffle_f32x4(y[2 * k], y[2 * k + 1], 0x88),
                         _mm512_shuffle_f32x4(y[2 * k], y[2 * k + 1], 0xDD));
  }
  for (int k = 0; k < 2; ++k) {  // block j: t2 of keys 8k + j, then 8k + 4 + j
    w[k] = _mm512_add_ps(_mm512_shuffle_ps(z[2 * k], z[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(z[2 * k], z[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  // Block j: the sums of keys j, 4 + j, 8 + j, 12 + j; then in key order.
  const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, r);
}

// Accumulators u and u + 2 of ggml_vec_dot_f16 added, for NQ query rows
// against NK keys (n % 64 == 0): accumulator u takes values 64s + 16u ..
// 64s + 16u + 15, s in order, from zero.
template <int NQ, int NK>
RAGD_F16_AVX512 inline void PairSums(const float* const* q, const uint16_t* const* keys, int64_t n, int u,
                                     __m512 (&pair)[NQ][NK]) {
  __m512 a[NQ][NK], b[NQ][NK];  // accumulators u and u + 2
#pragma GCC unroll 8
  for (int g = 0; g < NQ; ++g) {
#pragma GCC unroll 2
    for (int k = 0; k < NK; ++k) a[g][k] = b[g][k] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < n; i += 64) {
    __m512 ka[NK], kb[NK];
#pragma GCC unroll 2
    for (int k = 0; k < NK; ++k) {
      ka[k] = Load16(keys[k] + i + 16 * u);
      kb[k] = Load16(keys[k] + i + 16 * (u + 2));
    }
#pragma GCC unroll 8
    for (int g = 0; g < NQ; ++g) {
      __m512 qa = _mm512_loadu_ps(q[g] + i + 16 * u), qb = _mm512_loadu_ps(q[g] + i + 16 * (u + 2));
      // One load for the NK keys: left to itself GCC folds the load into
      // each FMA, loading the row NK times.
      asm("" : "+v"(qa), "+v"(qb));
#pragma GCC unroll 2
      for (int k = 0; k < NK; ++k) {
        a[g][k] = _mm512_fmadd_ps(ka[k], qa, a[g][k]);
        b[g][k] = _mm512_fmadd_ps(kb[k], qb, b[g][k]);
      }
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < NQ; ++g) {
#pragma GCC unroll 2
    for (int k = 0; k < NK; ++k) pair[g][k] = _mm512_add_ps(a[g][k], b[g][k]);
  }
}

// The combined accumulators (a0 + a2) + (a1 + a3). Pairs 0 + 2 run first,
// then 1 + 3, so at most 3 x NQ x NK vectors are live: with NK = 2 each query
// load serves two keys and each key load four queries (the loads, not the
// FMAs, bound the one-key version).
template <int NQ, int NK>
RAGD_F16_AVX512 inline void CombinedSums(const float* const* q, const uint16_t* const* keys, int64_t n,
                                         __m512 (&sum)[NQ][NK]) {
  __m512 first[NQ][NK], second[NQ][NK];
  PairSums<NQ, NK>(q, keys, n, 0, first);
  PairSums<NQ, NK>(q, keys, n, 1, second);
#pragma GCC unroll 8
  for (int g = 0; g < NQ; ++g) {
#pragma GCC unroll 2
    for (int k = 0; k < NK; ++k) sum[g][k] = _mm512_add_ps(first[g][k], second[g][k]);
  }
}

// Keeps the combined sums of keys j .. j + NK - 1 (sums[g][k]: query row g,
// key j + k) in slots (j + k) % 16 of x; the 16th key of a run reduces all
// 16 into out.
template <int NQ, int NK>
RAGD_F16_AVX512 inline void KeepSums(int64_t j, const __m512 (&sums)[NQ][NK], float (*x)[16][16], float* out,
                                     int64_t n_keys) {
  for (int k = 0; k < NK; ++k) {
    const int slot = static_cast<int>((j + k) % 16);
    for (int g = 0; g < NQ; ++g) _mm512_store_ps(x[g][slot], sums[g][k]);
    if (slot == 15) {
      for (int g = 0; g < NQ; ++g) _mm512_storeu_ps(out + g * n_keys + j + k - 15, Reduce16x16(x[g]));
    }
  }
}

// NQ query rows against every key, two keys at a time: out[g * n_keys + j]
// as DotRowsF16Order. The combined accumulators of 16 keys are kept and
// reduced together.
template <int NQ>
RAGD_F16_AVX512 void DotKeysAvx512(const float* const* q, const uint16_t* const* keys, int64_t n_keys,
                                   int64_t n, float* out) {
  alignas(64) float x[NQ][16][16];
  int64_t j = 0;
  for (; j + 2 <= n_keys; j += 2) {
    for (int64_t a = j + kKeysAhead; a < std::min(n_keys, j + kKeysAhead + 2); ++a) PrefetchRow(keys[a], n);
    __m512 sums[NQ][2];
    CombinedSums<NQ, 2>(q, keys + j, n, sums);
    KeepSums<NQ, 2>(j, sums, x, out, n_keys);
  }
  if (j < n_keys) {
    __m512 sums[NQ][1];
    CombinedSums<NQ, 1>(q, keys + j, n, sums);
    KeepSums<NQ, 1>(j, sums, x, out, n_keys);
  }
  const int64_t tail = n_keys % 16;
  for (int64_t k = 0; k < tail; ++k) {
    for (int g = 0; g < NQ; ++g)
      out[g * n_keys + n_keys - tail + k] = Reduce16Avx512(_mm512_load_ps(x[g][k]));
  }
}

// One load per 64-byte line of each row, in row order.
RAGD_F16_AVX2 void StreamRowsAvx2(const uint16_t* const* rows, int64_t n_rows, int64_t n) {
  __m256i any = _mm256_setzero_si256();
  for (int64_t j = 0; j < n_rows; ++j) {
    for (int64_t d = 0; d + 32 <= n; d += 32)
      any = _mm256_or_si256(any, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[j] + d)));
  }
  asm volatile("" : : "x"(any));  // the loads stay; their values are not needed
}

}  // namespace

float ExpF16Order(float x) { return kernels::ExpLlama(x); }

void StreamRowsF16(const uint16_t* const* rows, int64_t n_rows, int64_t n) {
  if (HasAvx2FmaF16c()) {
    StreamRowsAvx2(rows, n_rows, n);
    return;
  }
  uint16_t any = 0;
  for (int64_t j = 0; j < n_rows; ++j) {
    for (int64_t d = 0; d < n; d += 32) any |= rows[j][d];
  }
  asm volatile("" : : "r"(any));
}

namespace {

// f(std::integral_constant<int, k>{}) for k = min(4, n), n >= 1: the kernels
// below take up to four query rows, their count a template argument.
template <typename F>
void WithUpToFour(int n, F&& f) {
  switch (std::min(4, n)) {
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    default:
      return f(std::integral_constant<int, 1>{});
  }
}

}  // namespace

void DotRowsF16Order(const float* const* q, int nq, const uint16_t* const* keys, int64_t n_keys, int64_t n,
                     float* out) {
  const bool simd = HasAvx2FmaF16c();
  int g0 = 0;
  if (HasAvx512()) {
    for (; g0 < nq; g0 += 4) {
      WithUpToFour(nq - g0,
                   [&](auto rows) { DotKeysAvx512<rows()>(q + g0, keys, n_keys, n, out + g0 * n_keys); });
    }
  }
  if (simd) {
    for (; g0 < nq; g0 += 4) {
      WithUpToFour(nq - g0,
                   [&](auto rows) { DotKeysAvx2<rows()>(q + g0, keys, n_keys, n, out + g0 * n_keys); });
    }
  }
  for (int g = g0; g < nq; ++g) {
    for (int64_t j = 0; j < n_keys; ++j) out[g * n_keys + j] = DotScalar(keys[j], q[g], n);
  }
}

namespace {

__attribute__((target("avx2,fma"))) void ExpRowAvx2(float* e, const float* s, int64_t n, float mx) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(e + i, kernels::ExpLlama8(_mm256_sub_ps(_mm256_loadu_ps(s + i), _mm256_set1_ps(mx))));
  }
  for (; i < n; ++i) e[i] = ExpF16Order(s[i] - mx);
}

}  // namespace

void SoftmaxF16Order(float* s, int64_t n, int64_t first_pos) {
  if (n <= 0) return;
  float mx = s[0];
  for (int64_t i = 1; i < n; ++i) mx = s[i] > mx ? s[i] : mx;
  if (HasAvx2FmaF16c()) {
    ExpRowAvx2(s, s, n, mx);
  } else {
    for (int64_t i = 0; i < n; ++i) s[i] = ExpF16Order(s[i] - mx);
  }
  double sum = 0;
  const int64_t last = first_pos + n - 1;
  for (int64_t c0 = first_pos - first_pos % 16; c0 <= last; c0 += 16) {
    float lanes[16] = {};
    for (int l = 0; l < 16; ++l) {
      const int64_t p = c0 + l;
      if (p >= first_pos && p <= last) lanes[l] = s[p - first_pos];
    }
    sum += static_cast<double>(Reduce16(lanes));
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) s[i] *= inv;
}

namespace {

// acc[L][d] (L = position % 64) over the keys, then Combine64 per d. Each
// lane L accumulates its keys (positions L, L+64, ... in order) in registers,
// 64 values of d at a time.
RAGD_F16_AVX2 void WeightedSumAvx2(const float* w, const uint16_t* const* values, int64_t n_keys,
                                   int64_t first_pos, int64_t n, float* acc, bool* touched, float* out) {
  for (int L = 0; L < 64; ++L) {
    // First key of lane L: the smallest j >= 0 with (first_pos + j) % 64 == L.
    const int64_t j0 = ((L - first_pos) % 64 + 64) % 64;
    touched[L] = j0 < n_keys;
    float* a = acc + L * n;
    if (!touched[L]) {
      std::memset(a, 0, static_cast<size_t>(n) * sizeof(float));
      continue;
    }
    for (int64_t d0 = 0; d0 < n; d0 += 64) {
      const int blocks = static_cast<int>(n - d0 < 64 ? (n - d0) / 8 : 8);
      __m256 r[8];
      const __m256 w0 = _mm256_set1_ps(w[j0]);
      for (int k = 0; k < blocks; ++k) r[k] = _mm256_mul_ps(Load8(values[j0] + d0 + 8 * k), w0);
      for (int64_t j = j0 + 64; j < n_keys; j += 64) {
        const __m256 wj = _mm256_set1_ps(w[j]);
        for (int k = 0; k < blocks; ++k) r[k] = _mm256_fmadd_ps(Load8(values[j] + d0 + 8 * k), wj, r[k]);
      }
      for (int k = 0; k < blocks; ++k) _mm256_storeu_ps(a + d0 + 8 * k, r[k]);
    }
  }
  for (int64_t d = 0; d < n; d += 8) {
    __m256 x[16];
    for (int l = 0; l < 16; ++l) {
      x[l] = _mm256_add_ps(
          _mm256_add_ps(_mm256_loadu_ps(acc + l * n + d), _mm256_loadu_ps(acc + (32 + l) * n + d)),
          _mm256_add_ps(_mm256_loadu_ps(acc + (16 + l) * n + d), _mm256_loadu_ps(acc + (48 + l) * n + d)));
    }
    __m256 t8[8], t4[4];
    for (int i = 0; i < 8; ++i) t8[i] = _mm256_add_ps(x[i + 8], x[i]);
    for (int i = 0; i < 4; ++i) t4[i] = _mm256_add_ps(t8[i + 4], t8[i]);
    _mm256_storeu_ps(out + d, _mm256_add_ps(_mm256_add_ps(t4[0], t4[2]), _mm256_add_ps(t4[1], t4[3])));
  }
}

// The same sums with 512-bit registers and NQ query rows at once, so each
// value row is loaded once for all of them. For each lane l of the 16 and
// each accumulator u (positions 16u + l mod 64), 64 values of d at a time:
// y[g][u][d]; then x[g][l][d] = (y0 + y2) + (y1 + y3) (an untouched
// accumulator is exactly zero); then the 16 lanes of x are summed per row.
// `scratch` holds NQ * 20 * n floats.
template <int NQ>
RAGD_F16_AVX512 void WeightedSumAvx512(const float* w, const uint16_t* const* values, int64_t n_keys,
                                       int64_t first_pos, int64_t n, float* scratch, float* const* out) {
  float* y = scratch;               // [NQ][4][n]
  float* x = scratch + NQ * 4 * n;  // [NQ][16][n]
  for (int l = 0; l < 16; ++l) {
    for (int u = 0; u < 4; ++u) {
      const int64_t j0 = ((16 * u + l - first_pos) % 64 + 64) % 64;
      for (int64_t d0 = 0; d0 < n; d0 += 64) {
        __m512 r[NQ][4];
        if (j0 >= n_keys) {
          for (int g = 0; g < NQ; ++g)
            for (int k = 0; k < 4; ++k) r[g][k] = _mm512_setzero_ps();
        } else {
          __m512 v[4];
          for (int k = 0; k < 4; ++k) v[k] = Load16(values[j0] + d0 + 16 * k);
          for (int g = 0; g < NQ; ++g) {
            const __m512 w0 = _mm512_set1_ps(w[g * n_keys + j0]);
            for (int k = 0; k < 4; ++k) r[g][k] = _mm512_mul_ps(v[k], w0);
          }
          for (int64_t j = j0 + 64; j < n_keys; j += 64) {
            for (int k = 0; k < 4; ++k) v[k] = Load16(values[j] + d0 + 16 * k);
            for (int g = 0; g < NQ; ++g) {
              const __m512 wj = _mm512_set1_ps(w[g * n_keys + j]);
              for (int k = 0; k < 4; ++k) r[g][k] = _mm512_fmadd_ps(v[k], wj, r[g][k]);
            }
          }
        }
        for (int g = 0; g < NQ; ++g)
          for (int k = 0; k < 4; ++k) _mm512_storeu_ps(y + (g * 4 + u) * n + d0 + 16 * k, r[g][k]);
      }
    }
    for (int g = 0; g < NQ; ++g) {
      const float* yg = y + g * 4 * n;
      for (int64_t d = 0; d < n; d += 16) {
        const __m512 a02 = _mm512_add_ps(_mm512_loadu_ps(yg + d), _mm512_loadu_ps(yg + 2 * n + d));
        const __m512 a13 = _mm512_add_ps(_mm512_loadu_ps(yg + n + d), _mm512_loadu_ps(yg + 3 * n + d));
        _mm512_storeu_ps(x + (g * 16 + l) * n + d, _mm512_add_ps(a02, a13));
      }
    }
  }
  for (int g = 0; g < NQ; ++g) {
    const float* xg = x + g * 16 * n;
    for (int64_t d = 0; d < n; d += 16) {
      __m512 t8[8], t4[4];
      for (int i = 0; i < 8; ++i)
        t8[i] = _mm512_add_ps(_mm512_loadu_ps(xg + (i + 8) * n + d), _mm512_loadu_ps(xg + i * n + d));
      for (int i = 0; i < 4; ++i) t4[i] = _mm512_add_ps(t8[i + 4], t8[i]);
      _mm512_storeu_ps(out[g] + d, _mm512_add_ps(_mm512_add_ps(t4[0], t4[2]), _mm512_add_ps(t4[1], t4[3])));
    }
  }
}

}  // namespace

void WeightedRowSumF16Order(const float* w, int nq, const uint16_t* const* values, int64_t n_keys,
                            int64_t first_pos, int64_t n, float* const* out) {
  thread_local std::vector<float> acc;
  const bool simd = HasAvx2FmaF16c() && n % 8 == 0;
  int g0 = 0;
  if (simd && HasAvx512() && n % 64 == 0) {
    acc.resize(static_cast<size_t>(4 * 20 * n));
    for (; g0 < nq; g0 += 4) {
      WithUpToFour(nq - g0, [&](auto rows) {
        WeightedSumAvx512<rows()>(w + g0 * n_keys, values, n_keys, first_pos, n, acc.data(), out + g0);
      });
    }
    return;
  }
  acc.resize(static_cast<size_t>(64 * n));
  for (int g = 0; g < nq; ++g) {
    bool touched[64] = {};
    const float* wg = w + g * n_keys;
    if (simd) {
      WeightedSumAvx2(wg, values, n_keys, first_pos, n, acc.data(), touched, out[g]);
      continue;
    }
    for (int64_t j = 0; j < n_keys; ++j) {
      const int L = static_cast<int>((first_pos + j) % 64);
      float* a = acc.data() + L * n;
      if (!touched[L]) {
        for (int64_t d = 0; d < n; ++d) a[d] = HalfToFloat(values[j][d]) * wg[j];
        touched[L] = true;
      } else {
        for (int64_t d = 0; d < n; ++d) a[d] = std::fma(HalfToFloat(values[j][d]), wg[j], a[d]);
      }
    }
    for (int L = 0; L < 64; ++L) {
      if (!touched[L]) std::memset(acc.data() + L * n, 0, static_cast<size_t>(n) * sizeof(float));
    }
    float lanes[64];
    for (int64_t d = 0; d < n; ++d) {
      for (int L = 0; L < 64; ++L) lanes[L] = acc[L * n + d];
      out[g][d] = Combine64(lanes);
    }
  }
}

}  // namespace ragd::inference
