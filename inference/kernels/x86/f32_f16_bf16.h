// F32 / F16 / BF16 weight rows times float activation rows (AVX2 + FMA +
// F16C), up to four activation rows per pass. Included only by the
// per-instruction-set kernel files; internal linkage.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "inference/kernels/x86/common.h"

namespace ragd::inference::kernels {
namespace {

// F32 / F16 / BF16 weights with float activations.
template <GgmlType kType>
inline __m256 LoadWeights8(const uint8_t* p) {
  if constexpr (kType == GgmlType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (kType == GgmlType::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
}

template <GgmlType kType, int C>
void DotTileFloat(int64_t n, const uint8_t* w_row, const uint8_t* const* acts, float* out) {
  constexpr int kBytes = kType == GgmlType::kF32 ? 4 : 2;
  __m256 acc[C][2];
  for (int c = 0; c < C; ++c) acc[c][0] = acc[c][1] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = LoadWeights8<kType>(w_row + i * kBytes);
    const __m256 w1 = LoadWeights8<kType>(w_row + (i + 8) * kBytes);
    for (int c = 0; c < C; ++c) {
      const float* x = reinterpret_cast<const float*>(acts[c]) + i;
      acc[c][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x), acc[c][0]);
      acc[c][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + 8), acc[c][1]);
    }
  }
  for (int c = 0; c < C; ++c) {
    float s = Hsum(_mm256_add_ps(acc[c][0], acc[c][1]));
    const float* x = reinterpret_cast<const float*>(acts[c]);
    for (int64_t k = i; k < n; ++k) {
      float v;
      if constexpr (kType == GgmlType::kF32) {
        std::memcpy(&v, w_row + 4 * k, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, w_row + 2 * k, 2);
        v = kType == GgmlType::kF16 ? H2F(h) : Bf16ToFloat(h);
      }
      s += v * x[k];
    }
    out[c] = s;
  }
}

}  // namespace
}  // namespace ragd::inference::kernels
