// AVX2+FMA variants of vec_ops.h (compiled for that ISA through function
// attributes), called only from IsaLevel::kAvx2 on (vec_ops.cpp).
#include <immintrin.h>

#include "inference/kernels/vec_ops.h"

namespace ragd::inference::vec_internal {

__attribute__((target("avx2,fma"))) float DotAvx2(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  acc0 = _mm256_add_ps(acc0, acc1);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  float sum = _mm_cvtss_f32(s);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

__attribute__((target("avx2,fma"))) void AxpyAvx2(float alpha, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += alpha * x[i];
}

__attribute__((target("avx2,f16c"))) void RoundToHalfF16c(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) x[i] = _cvtsh_ss(_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx2,f16c"))) void FloatToHalfRowF16c(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) out[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("avx2,f16c"))) void HalfToFloatRowF16c(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
  for (; i < n; ++i) out[i] = _cvtsh_ss(x[i]);
}

namespace {
__attribute__((target("avx2,fma"))) inline float Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}
// Lane g of the result is the full sum of a<g>.
__attribute__((target("avx2,fma"))) inline __m128 Reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}
}  // namespace

// Each key row is loaded once for all nq queries; n % 16 == 0.
__attribute__((target("avx2,fma"))) void DotRowsAvx2(const float* const* q, int nq, const float* const* rows,
                                                     int64_t n_rows, int64_t n, float* out) {
  if (nq != 4) {
    for (int g = 0; g < nq; ++g) {
      for (int64_t j = 0; j < n_rows; ++j) out[g * n_rows + j] = DotAvx2(q[g], rows[j], n);
    }
    return;
  }
  // Two keys per pass: 6 loads feed 8 FMAs. The four sums of one key are
  // reduced together with a hadd tree.
  int64_t j = 0;
  for (; j + 2 <= n_rows; j += 2) {
    const float* k0 = rows[j];
    const float* k1 = rows[j + 1];
    __m256 a[4][2];
    for (int g = 0; g < 4; ++g) a[g][0] = a[g][1] = _mm256_setzero_ps();
    for (int64_t d = 0; d < n; d += 8) {
      const __m256 v0 = _mm256_loadu_ps(k0 + d), v1 = _mm256_loadu_ps(k1 + d);
      for (int g = 0; g < 4; ++g) {
        const __m256 qv = _mm256_loadu_ps(q[g] + d);
        a[g][0] = _mm256_fmadd_ps(qv, v0, a[g][0]);
        a[g][1] = _mm256_fmadd_ps(qv, v1, a[g][1]);
      }
    }
    alignas(16) float r0[4], r1[4];
    _mm_store_ps(r0, Reduce4(a[0][0], a[1][0], a[2][0], a[3][0]));
    _mm_store_ps(r1, Reduce4(a[0][1], a[1][1], a[2][1], a[3][1]));
    for (int g = 0; g < 4; ++g) {
      out[g * n_rows + j] = r0[g];
      out[g * n_rows + j + 1] = r1[g];
    }
  }
  for (; j < n_rows; ++j) {
    for (int g = 0; g < 4; ++g) out[g * n_rows + j] = DotAvx2(q[g], rows[j], n);
  }
}

// Output columns in chunks of 16 stay in registers while all value rows
// stream past; each value load feeds every query's accumulator.
__attribute__((target("avx2,fma"))) void WeightedRowSumAvx2(const float* w, int nq, const float* const* rows,
                                                            int64_t n_rows, int64_t n, float* const* out) {
  for (int g0 = 0; g0 < nq; g0 += 4) {
    const int cnt = nq - g0 < 4 ? nq - g0 : 4;
    for (int64_t d = 0; d < n; d += 16) {
      __m256 acc[4][2];
      for (int g = 0; g < 4; ++g) acc[g][0] = acc[g][1] = _mm256_setzero_ps();
      for (int64_t j = 0; j < n_rows; ++j) {
        const __m256 v0 = _mm256_loadu_ps(rows[j] + d), v1 = _mm256_loadu_ps(rows[j] + d + 8);
        for (int g = 0; g < cnt; ++g) {
          const __m256 wv = _mm256_broadcast_ss(w + (g0 + g) * n_rows + j);
          acc[g][0] = _mm256_fmadd_ps(wv, v0, acc[g][0]);
          acc[g][1] = _mm256_fmadd_ps(wv, v1, acc[g][1]);
        }
      }
      for (int g = 0; g < cnt; ++g) {
        _mm256_storeu_ps(out[g0 + g] + d, acc[g][0]);
        _mm256_storeu_ps(out[g0 + g] + d + 8, acc[g][1]);
      }
    }
  }
}

}  // namespace ragd::inference::vec_internal
