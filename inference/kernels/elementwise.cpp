// Element-wise operations of a transformer layer. GeluTanh, Softmax, SwiGlu,
// Argmax and FindAtLeast use the active level's vector versions
// (dispatch.cpp); Rope and GeluTanhHalf their AVX2 / F16C bodies from
// IsaLevel::kAvx2 on.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "inference/kernels/cpu_features.h"
#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"
#include "inference/kernels/quant_blocks.h"

namespace ragd::inference {
namespace kernels {

void GeluTanhRef(float* x, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * (1.0f + 0.044715f * v * v)));
  }
}

void SoftmaxRef(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

int64_t ArgmaxRef(const float* x, int64_t n, float* max) {
  int64_t best = 0;
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > m) {  // NaN never compares greater
      m = x[i];
      best = i;
    }
  }
  *max = m;
  return best;
}

int64_t FindAtLeastRef(const float* x, int64_t begin, int64_t n, float t) {
  for (int64_t i = begin; i < n; ++i) {
    if (x[i] >= t) return i;
  }
  return n;
}

void SwiGluRef(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

const ElementwiseSet kScalarElementwise = {GeluTanhRef, SoftmaxRef, ArgmaxRef, FindAtLeastRef, SwiGluRef};

}  // namespace kernels

namespace {

// RmsNorm of R consecutive rows of n: the R sums of squares are independent
// chains of double additions (each in index order, as llama.cpp adds), run
// side by side so that their latencies overlap.
template <int R>
void RmsNormTogether(const float* x, const float* weight, int64_t n, float eps, float* out) {
  double sum[R] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int r = 0; r < R; ++r) sum[r] += static_cast<double>(x[r * n + i] * x[r * n + i]);
  }
  for (int r = 0; r < R; ++r) {
    const float mean = static_cast<float>(sum[r] / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t j = 0; j < n; ++j) out[r * n + j] = (x[r * n + j] * scale) * weight[j];
  }
}

}  // namespace

void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  // Squares of floats summed in double in index order, as llama.cpp does
  // (the residual stream spans enough magnitudes for the order to matter).
  RmsNormTogether<1>(x, weight, n, eps, out);
}

void RmsNormRows(const float* x, const float* weight, int64_t rows, int64_t n, float eps, float* out) {
  constexpr int kTogether = 4;  // four chains hide the latency of the double adds
  int64_t r = 0;
  for (; r + kTogether <= rows; r += kTogether)
    RmsNormTogether<kTogether>(x + r * n, weight, n, eps, out + r * n);
  for (; r < rows; ++r) RmsNormTogether<1>(x + r * n, weight, n, eps, out + r * n);
}

namespace {

// head[i], head[i+half] rotated by (cos[i], sin[i]) with llama.cpp's roundings
// (its build contracts the products into fmas): a' = fma(a, cos, -(b*sin)),
// b' = fma(a, sin, b*cos).
void RotatePairsScalar(float* head, int64_t half, const float* cos, const float* sin) {
  for (int64_t i = 0; i < half; ++i) {
    const float a = head[i], b = head[i + half];
    head[i] = std::fma(a, cos[i], -(b * sin[i]));
    head[i + half] = std::fma(a, sin[i], b * cos[i]);
  }
}

__attribute__((target("avx2,fma"))) void RotatePairsFma(float* head, int64_t half, const float* cos,
                                                        const float* sin) {
  int64_t i = 0;
  for (; i + 8 <= half; i += 8) {
    const __m256 a = _mm256_loadu_ps(head + i), b = _mm256_loadu_ps(head + i + half);
    const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
    _mm256_storeu_ps(head + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
    _mm256_storeu_ps(head + i + half, _mm256_fmadd_ps(a, s, _mm256_mul_ps(b, c)));
  }
  for (; i < half; ++i) {
    const float a = head[i], b = head[i + half];
    head[i] = std::fma(a, cos[i], -(b * sin[i]));
    head[i + half] = std::fma(a, sin[i], b * cos[i]);
  }
}

void RotatePairs(float* head, int64_t half, const float* cos, const float* sin) {
  static const bool fma = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx2;
  if (fma) {
    RotatePairsFma(head, half, cos, sin);
  } else {
    RotatePairsScalar(head, half, cos, sin);
  }
}

}  // namespace

void Rope(float* head, int64_t head_dim, int64_t pos, const RopeSpec& spec) {
  // Per calling thread: the cos/sin table of the last (pos, spec, head_dim),
  // which the heads of one token share.
  struct Table {
    int64_t head_dim = -1, pos = -1;
    RopeSpec spec;
    std::vector<float> cos, sin;
  };
  thread_local Table t;
  const int64_t half = head_dim / 2;
  if (t.head_dim != head_dim || t.pos != pos || t.spec.base != spec.base ||
      t.spec.freq_scale != spec.freq_scale || t.spec.freq_factors != spec.freq_factors) {
    t.cos.resize(static_cast<size_t>(half));
    t.sin.resize(static_cast<size_t>(half));
    const float theta_scale = std::pow(spec.base, -2.0f / static_cast<float>(head_dim));
    float theta = static_cast<float>(pos);
    for (int64_t i = 0; i < half; ++i) {
      float angle = spec.freq_factors != nullptr ? theta / spec.freq_factors[i] : theta;
      if (spec.freq_scale != 1.f) angle *= spec.freq_scale;
      t.cos[i] = std::cos(angle);
      t.sin[i] = std::sin(angle);
      theta *= theta_scale;
    }
    t.head_dim = head_dim;
    t.pos = pos;
    t.spec = spec;
  }
  if (spec.neox) {
    RotatePairs(head, half, t.cos.data(), t.sin.data());
    return;
  }
  for (int64_t i = 0; i < half; ++i) {  // adjacent pairs, the same roundings
    const float a = head[2 * i], b = head[2 * i + 1];
    head[2 * i] = std::fma(a, t.cos[i], -(b * t.sin[i]));
    head[2 * i + 1] = std::fma(a, t.sin[i], b * t.cos[i]);
  }
}

void RopeNeox(float* head, int64_t head_dim, int64_t pos, float base) {
  Rope(head, head_dim, pos, RopeSpec{.base = base});
}

namespace {

// out[i] = table[half(x[i])] with F16C conversions (same results as the
// portable loop below).
__attribute__((target("f16c"))) void GeluLookupF16c(float* x, int64_t n, const uint16_t* table) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (v <= -10.0f) {
      x[i] = 0.0f;
    } else if (v < 10.0f) {
      x[i] = _cvtsh_ss(table[_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT)]);
    }
  }
}

}  // namespace

void GeluTanhHalf(float* x, int64_t n) {
  // gelu(h) rounded to half for every half h (128 KiB, built once).
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t(1 << 16);
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoefA = 0.044715f;
    for (uint32_t h = 0; h < t.size(); ++h) {
      const float v = kernels::HalfToFloat(static_cast<uint16_t>(h));
      // As llama.cpp's table (its build contracts 1 + A*x*x into one fma).
      const float g = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * std::fma(kCoefA * v, v, 1.0f)));
      t[h] = kernels::FloatToHalf(g);
    }
    return t;
  }();
  static const bool f16c = kernels::ActiveLevel() >= kernels::IsaLevel::kAvx2;
  if (f16c) return GeluLookupF16c(x, n, table.data());
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (v <= -10.0f) {
      x[i] = 0.0f;
    } else if (v < 10.0f) {
      x[i] = kernels::HalfToFloat(table[kernels::FloatToHalf(v)]);
    }
  }
}

void Softmax(float* x, int64_t n) { kernels::ActiveElementwise().softmax(x, n); }

void GeluTanh(float* x, int64_t n) { kernels::ActiveElementwise().gelu_tanh(x, n); }

void SwiGlu(float* gate, const float* up, int64_t n) { kernels::ActiveElementwise().swiglu(gate, up, n); }

int64_t Argmax(const float* x, int64_t n, float* max) {
  return kernels::ActiveElementwise().argmax(x, n, max);
}

int64_t FindAtLeast(const float* x, int64_t begin, int64_t n, float t) {
  return kernels::ActiveElementwise().find_at_least(x, begin, n, t);
}

}  // namespace ragd::inference
