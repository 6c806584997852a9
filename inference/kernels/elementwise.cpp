// Element-wise operations of a transformer layer. GeluTanh and Softmax use the
// active kernel set's vector versions when it has them.
#include <cmath>
#include <string>
#include <vector>

#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"

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

const ElementwiseSet& ActiveElementwise() {
  static const ElementwiseSet& set = []() -> const ElementwiseSet& {
    const std::string name = ActiveKernels().name;
    if (name == "avx512vnni") return kAvx512Elementwise;
    if (name == "avx2") return kAvx2Elementwise;
    return kScalarElementwise;
  }();
  return set;
}

const ElementwiseSet kScalarElementwise = {GeluTanhRef, SoftmaxRef};

}  // namespace kernels

void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += x[i + k] * x[i + k];
  }
  for (; i < n; ++i) acc[0] += x[i] * x[i];
  float ss = 0;
  for (float a : acc) ss += a;
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int64_t j = 0; j < n; ++j) out[j] = x[j] * scale * weight[j];
}

void RopeNeox(float* head, int64_t head_dim, int64_t pos, float base) {
  // Per calling thread: the inverse frequencies of the last few (head_dim,
  // base) pairs (a model alternates two bases), and the cos/sin table of the
  // last (pos, base, head_dim), which the heads of one token share.
  struct Freqs {
    int64_t head_dim = -1;
    float base = 0;
    std::vector<double> inv;
  };
  struct Table {
    int64_t head_dim = -1, pos = -1;
    float base = 0;
    std::vector<float> cos, sin;
  };
  thread_local Freqs freqs[4];
  thread_local int next_slot = 0;
  thread_local Table t;
  const int64_t half = head_dim / 2;
  if (t.head_dim != head_dim || t.pos != pos || t.base != base) {
    Freqs* f = nullptr;
    for (Freqs& cand : freqs) {
      if (cand.head_dim == head_dim && cand.base == base) f = &cand;
    }
    if (f == nullptr) {
      f = &freqs[next_slot];
      next_slot = (next_slot + 1) % 4;
      f->head_dim = head_dim;
      f->base = base;
      f->inv.resize(static_cast<size_t>(half));
      for (int64_t i = 0; i < half; ++i) {
        f->inv[i] = std::pow(static_cast<double>(base),
                             -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      }
    }
    t.cos.resize(static_cast<size_t>(half));
    t.sin.resize(static_cast<size_t>(half));
    constexpr double kTwoPi = 6.283185307179586;
    for (int64_t i = 0; i < half; ++i) {
      // Reduce the angle in double, then float sin/cos on [-pi, pi].
      const double theta = static_cast<double>(pos) * f->inv[i];
      const float r = static_cast<float>(theta - kTwoPi * std::nearbyint(theta / kTwoPi));
      t.cos[i] = std::cos(r);
      t.sin[i] = std::sin(r);
    }
    t.head_dim = head_dim;
    t.pos = pos;
    t.base = base;
  }
  for (int64_t i = 0; i < half; ++i) {
    const float a = head[i], b = head[i + half];
    head[i] = a * t.cos[i] - b * t.sin[i];
    head[i + half] = a * t.sin[i] + b * t.cos[i];
  }
}

void Softmax(float* x, int64_t n) { kernels::ActiveElementwise().softmax(x, n); }

void GeluTanh(float* x, int64_t n) { kernels::ActiveElementwise().gelu_tanh(x, n); }

}  // namespace ragd::inference
