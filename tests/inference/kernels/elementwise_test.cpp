// Element-wise ops against straightforward double-precision code, for the
// active set and every set the CPU supports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/f16_attention.h"
#include "inference/kernels/kernels.h"
#include "test_util.h"

namespace ragd::inference {
namespace {

using kernels::ElementwiseSet;

std::vector<const ElementwiseSet*> Sets() {
  std::vector<const ElementwiseSet*> out = {&kernels::kScalarElementwise};
  for (const auto* ks : testing::SupportedSets()) {
    if (std::string(ks->name) == "avx2") out.push_back(&kernels::kAvx2Elementwise);
    if (std::string(ks->name) == "avx512vnni") out.push_back(&kernels::kAvx512Elementwise);
  }
  return out;
}

TEST(Elementwise, RmsNorm) {
  std::mt19937 rng(20);
  for (int64_t n : {1, 7, 640, 1001}) {
    auto x = testing::RandomFloats(n, rng, 3.0f);
    auto w = testing::RandomFloats(n, rng);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / n + 1e-6);
    std::vector<float> out(n);
    RmsNorm(x.data(), w.data(), n, 1e-6f, out.data());
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(out[i], x[i] * scale * w[i], 1e-5 * std::fabs(x[i] * scale * w[i]) + 1e-6);
    RmsNorm(x.data(), w.data(), n, 1e-6f, x.data());  // in place
    EXPECT_EQ(x, out);
  }
  std::vector<float> zero(16, 0.0f), w(16, 1.0f), out(16);
  RmsNorm(zero.data(), w.data(), 16, 1e-6f, out.data());
  EXPECT_EQ(out[3], 0.0f);
}

TEST(Elementwise, RmsNormRowsIsRmsNormOfEachRow) {
  // Rows of very different magnitudes (the double sums' rounding depends on
  // them), in numbers that leave every remainder of the rows taken together.
  std::mt19937 rng(21);
  for (int64_t rows : {1, 3, 4, 5, 8, 9}) {
    for (int64_t n : {7, 256, 640}) {
      std::vector<float> x;
      for (int64_t r = 0; r < rows; ++r) {
        const auto row = testing::RandomFloats(n, rng, std::pow(10.0f, static_cast<float>(r % 5) - 2));
        x.insert(x.end(), row.begin(), row.end());
      }
      const auto w = testing::RandomFloats(n, rng);
      std::vector<float> want(rows * n), got(rows * n);
      for (int64_t r = 0; r < rows; ++r) RmsNorm(x.data() + r * n, w.data(), n, 1e-6f, want.data() + r * n);
      RmsNormRows(x.data(), w.data(), rows, n, 1e-6f, got.data());
      EXPECT_EQ(got, want) << rows << " rows of " << n;
      RmsNormRows(x.data(), w.data(), rows, n, 1e-6f, x.data());  // in place
      EXPECT_EQ(x, want) << rows << " rows of " << n << " in place";
    }
  }
}

TEST(Elementwise, RopeNeox) {
  std::mt19937 rng(21);
  const int64_t hd = 256;
  for (int64_t pos : {0, 1, 17, 4000, 32767}) {
    for (float base : {10000.0f, 1e6f}) {
      auto h = testing::RandomFloats(hd, rng);
      auto orig = h;
      RopeNeox(h.data(), hd, pos, base);
      // llama.cpp's angles (float, theta_{i+1} = theta_i * base^(-2/hd)) and
      // roundings, reproduced exactly; and within float rounding of the exact angle
      // (the iterated product drifts by up to ~3e-7 relative, times pos).
      const float scale = std::pow(base, -2.0f / static_cast<float>(hd));
      float theta = static_cast<float>(pos);
      for (int64_t i = 0; i < hd / 2; ++i) {
        const float a = orig[i], b = orig[i + hd / 2];
        const float c = std::cos(theta), s = std::sin(theta);
        EXPECT_EQ(h[i], std::fma(a, c, -(b * s)));
        EXPECT_EQ(h[i + hd / 2], std::fma(a, s, b * c));
        theta *= scale;
        const double th = pos * std::pow(static_cast<double>(base), -2.0 * i / hd);
        const double tol = 1e-5 + 1e-6 * static_cast<double>(pos);
        EXPECT_NEAR(h[i], a * std::cos(th) - b * std::sin(th), tol);
        EXPECT_NEAR(h[i + hd / 2], a * std::sin(th) + b * std::cos(th), tol);
      }
    }
  }
  std::vector<float> v = {1, 2, 3, 4};
  RopeNeox(v.data(), 4, 0, 10000.0f);  // position 0: identity
  EXPECT_EQ(v, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Elementwise, Softmax) {
  std::mt19937 rng(22);
  for (const ElementwiseSet* set : Sets()) {
    for (int64_t n : {1, 3, 16, 100, 513}) {
      auto x = testing::RandomFloats(n, rng, 5.0f);
      if (n > 1) x[0] = -INFINITY;  // masked key
      if (n > 2) x[1] = 80.0f;
      auto y = x;
      set->softmax(y.data(), n);
      double mx = -INFINITY, sum = 0;
      for (float v : x) mx = std::max<double>(mx, v);
      for (float v : x) sum += std::exp(v - mx);
      for (int64_t i = 0; i < n; ++i) {
        const double want = n == 1 ? 1.0 : std::exp(x[i] - mx) / sum;
        EXPECT_NEAR(y[i], want, 2e-6 + 1e-5 * want) << i;
      }
    }
  }
}

// The first index of the largest value, NaN skipped, on every set; 0 and
// -inf when nothing is above -inf.
TEST(Elementwise, Argmax) {
  std::mt19937 rng(23);
  for (const ElementwiseSet* set : Sets()) {
    for (int64_t n : {1, 7, 8, 9, 100, 262144}) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        auto x = testing::RandomFloats(n, rng, 3.0f);
        x[at] = 50.0f;
        if (at + 1 < n) x[n - 1] = 50.0f;  // a later tie loses
        if (at > 0) x[at - 1] = NAN;
        float max = 0;
        EXPECT_EQ(at, set->argmax(x.data(), n, &max)) << "n=" << n;
        EXPECT_EQ(50.0f, max);
      }
    }
    std::vector<float> none = {-INFINITY, NAN, -INFINITY, NAN, -INFINITY, NAN, -INFINITY, NAN, NAN};
    float max = 0;
    EXPECT_EQ(0, set->argmax(none.data(), static_cast<int64_t>(none.size()), &max));
    EXPECT_EQ(-INFINITY, max);
    std::vector<float> top = {1, INFINITY, 2, 3, 4, 5, 6, 7, INFINITY, 8};
    EXPECT_EQ(1, set->argmax(top.data(), static_cast<int64_t>(top.size()), &max));
    EXPECT_EQ(INFINITY, max);
  }
}

// Every set finds the same first x[i] >= t from any start, over NaN and
// ties, and n when there is none.
TEST(Elementwise, FindAtLeast) {
  std::mt19937 rng(29);
  for (const ElementwiseSet* set : Sets()) {
    for (int64_t n : {1, 7, 8, 9, 100, 1000}) {
      auto x = testing::RandomFloats(n, rng, 3.0f);
      for (int64_t i = 0; i < n; i += 3) x[i] = NAN;
      x[n / 2] = 1.5f;  // a value equal to the threshold counts
      for (float t : {-INFINITY, -1.0f, 1.5f, 2.9f, 4.0f}) {
        for (int64_t begin : {int64_t{0}, int64_t{1}, n / 2, n - 1, n}) {
          int64_t want = begin;
          while (want < n && !(x[want] >= t)) ++want;
          EXPECT_EQ(want, set->find_at_least(x.data(), begin, n, t))
              << "n=" << n << " t=" << t << " from " << begin;
        }
      }
    }
  }
}

// llama.cpp's GELU: input and output rounded to half through a table.
TEST(Elementwise, GeluTanhHalf) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.013f) x.push_back(v);
  x.push_back(-10.0f);
  x.push_back(10.0f);
  auto y = x;
  GeluTanhHalf(y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (v <= -10.0) {
      EXPECT_EQ(y[i], 0.0f) << v;
      continue;
    }
    if (v >= 10.0) {
      EXPECT_EQ(y[i], x[i]) << v;
      continue;
    }
    // Exactly a half, and within half precision of the exact value at the
    // half-rounded input.
    EXPECT_EQ(kernels::HalfToFloat(kernels::FloatToHalf(y[i])), y[i]) << v;
    const double h = kernels::HalfToFloat(kernels::FloatToHalf(x[i]));
    const double want = 0.5 * h * (1 + std::tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)));
    EXPECT_NEAR(y[i], want, 1e-7 + std::fabs(want) * 1.0 / 1024) << v;
  }
}

TEST(Elementwise, GeluTanh) {
  for (const ElementwiseSet* set : Sets()) {
    std::vector<float> x;
    for (float v = -12.0f; v <= 12.0f; v += 0.01f) x.push_back(v);
    x.push_back(-100.0f);
    x.push_back(100.0f);
    auto y = x;
    set->gelu_tanh(y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(y[i], want, 2e-6 + 2e-6 * std::fabs(want)) << v;
    }
  }
  std::vector<float> a = {1.0f, -2.0f};
  GeluTanh(a.data(), 2);
  EXPECT_NEAR(a[0], 0.841192f, 1e-5);
  EXPECT_NEAR(a[1], -0.0454023f, 1e-5);
}

// SiLU(gate) * up near the float result for every set; on x86, bitwise
// llama.cpp's (ggml_vec_swiglu_f32 on AVX-512: its vector exp on the groups
// of 16 values from the start, libm's expf on the rest), whatever the length.
TEST(Elementwise, SwiGlu) {
  std::vector<float> gate, up;
  for (float v = -20.0f; v <= 20.0f; v += 0.013f) gate.push_back(v);
  for (float v = -89.5f; v <= -87.5f; v += 0.001f) gate.push_back(v);  // exp(-v) near FLT_MAX
  for (float v : {-200.0f, -140.0f, -100.0f, -88.73f, 88.73f, 100.0f, 140.0f, 200.0f, 0.0f, -0.0f}) {
    gate.push_back(v);
  }
  for (size_t i = 0; i < gate.size(); ++i) up.push_back(0.5f + 0.25f * static_cast<float>(i % 7));
  const int64_t total = static_cast<int64_t>(gate.size());
  for (const ElementwiseSet* set : Sets()) {
    auto y = gate;
    set->swiglu(y.data(), up.data(), total);
    for (int64_t i = 0; i < total; ++i) {
      const double g = gate[i];
      const double want = g / (1 + std::exp(-g)) * up[i];
      EXPECT_NEAR(y[i], want, 1e-30 + 1e-6 * std::fabs(want)) << set << " " << g;
    }
    if (set == &kernels::kScalarElementwise) continue;
    for (int64_t n :
         {int64_t{0}, int64_t{1}, int64_t{8}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{40}, total}) {
      y = gate;
      set->swiglu(y.data(), up.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        const float e = i < n / 16 * 16 ? ExpF16Order(-g) : std::exp(-g);
        const float want = g / (1.0f + e) * up[i];
        ASSERT_EQ(std::memcmp(&y[i], &want, sizeof want), 0)
            << "n " << n << " value " << i << " (" << g << "): " << y[i] << " vs " << want;
      }
    }
  }
}

}  // namespace
}  // namespace ragd::inference
