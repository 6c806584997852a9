// The llama.cpp-order attention helpers (inference/kernels/f16_attention.h)
// against plain scalar statements of the same summation orders, bitwise, on
// random data: key counts below and above the 16- and 64-slot groups, and
// windows that do not start at a group boundary.
#include "inference/kernels/f16_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "inference/kernels/quant_blocks.h"

namespace ragd::inference {
namespace {

// _mm512_reduce_add_ps's pairs: (l, l+8), (l, l+4), then (0+2) + (1+3).
float Reduce16(const float* v) {
  float t8[8], t4[4];
  for (int i = 0; i < 8; ++i) t8[i] = v[i] + v[i + 8];
  for (int i = 0; i < 4; ++i) t4[i] = t8[i] + t8[i + 4];
  return (t4[0] + t4[2]) + (t4[1] + t4[3]);
}

// Four 16-lane accumulators (slot s: accumulator (s % 64) / 16, lane s % 16),
// combined as (a0 + a2) + (a1 + a3).
float Combine(const float acc[4][16]) {
  float x[16];
  for (int l = 0; l < 16; ++l) x[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  return Reduce16(x);
}

std::vector<float> Random(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Random values as IEEE halves (the rows of an F16 KV cache).
std::vector<uint16_t> RandomHalves(size_t n, std::mt19937& rng, float scale) {
  std::vector<uint16_t> h;
  for (float x : Random(n, rng, scale)) h.push_back(kernels::FloatToHalf(x));
  return h;
}

// 1 to 5 query rows: the kernels take them four at a time.
TEST(F16Attention, DotRowsMatchesTheScalarOrder) {
  std::mt19937 rng(1);
  const int64_t n = 256, n_keys = 37;
  for (int nq = 1; nq <= 5; ++nq) {
    const auto qv = Random(nq * n, rng, 1.0f);
    const auto kv = RandomHalves(n_keys * n, rng, 1.0f);
    std::vector<const float*> q(nq);
    for (int g = 0; g < nq; ++g) q[g] = qv.data() + g * n;
    std::vector<const uint16_t*> keys(n_keys);
    for (int64_t j = 0; j < n_keys; ++j) keys[j] = kv.data() + j * n;
    std::vector<float> got(nq * n_keys);
    DotRowsF16Order(q.data(), nq, keys.data(), n_keys, n, got.data());
    for (int g = 0; g < nq; ++g) {
      for (int64_t j = 0; j < n_keys; ++j) {
        float acc[4][16] = {};
        for (int64_t i = 0; i < n; ++i) {
          float& a = acc[(i % 64) / 16][i % 16];
          a = std::fma(kernels::HalfToFloat(keys[j][i]), q[g][i], a);
        }
        EXPECT_EQ(got[g * n_keys + j], Combine(acc)) << "nq " << nq << " g " << g << " key " << j;
      }
    }
  }
}

TEST(F16Attention, ExpIsCloseToExp) {
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(ExpF16Order(x), want, 3e-7 * want) << x;
  }
  EXPECT_EQ(ExpF16Order(0.0f), 1.0f);
  EXPECT_EQ(ExpF16Order(-200.0f), 0.0f);
  EXPECT_EQ(ExpF16Order(-INFINITY), 0.0f);
}

TEST(F16Attention, SoftmaxMatchesTheScalarOrder) {
  std::mt19937 rng(2);
  for (const auto& [n, first] : {std::pair<int64_t, int64_t>{1, 0}, {7, 0}, {30, 0}, {100, 5}, {513, 77}}) {
    auto s = Random(n, rng, 4.0f);
    const auto orig = s;
    SoftmaxF16Order(s.data(), n, first);
    float mx = orig[0];
    for (float v : orig) mx = std::max(mx, v);
    std::vector<float> e(n);
    for (int64_t i = 0; i < n; ++i) e[i] = ExpF16Order(orig[i] - mx);
    double sum = 0;
    for (int64_t c0 = first - first % 16; c0 < first + n; c0 += 16) {
      float lanes[16] = {};
      for (int l = 0; l < 16; ++l) {
        if (c0 + l >= first && c0 + l < first + n) lanes[l] = e[c0 + l - first];
      }
      sum += Reduce16(lanes);
    }
    const float inv = static_cast<float>(1.0 / sum);
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(s[i], e[i] * inv) << "n " << n << " i " << i;
      total += s[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

TEST(F16Attention, WeightedRowSumMatchesTheScalarOrder) {
  std::mt19937 rng(3);
  const int64_t n = 256;
  for (const auto& [n_keys, first] : {std::pair<int64_t, int64_t>{5, 0}, {40, 3}, {200, 61}}) {
    for (int nq = 1; nq <= 5; ++nq) {
      const auto w = Random(nq * n_keys, rng, 0.1f);
      const auto vv = RandomHalves(n_keys * n, rng, 1.0f);
      std::vector<const uint16_t*> values(n_keys);
      for (int64_t j = 0; j < n_keys; ++j) values[j] = vv.data() + j * n;
      std::vector<std::vector<float>> o(nq, std::vector<float>(n));
      std::vector<float*> out(nq);
      for (int g = 0; g < nq; ++g) out[g] = o[g].data();
      WeightedRowSumF16Order(w.data(), nq, values.data(), n_keys, first, n, out.data());
      for (int g = 0; g < nq; ++g) {
        for (int64_t d = 0; d < n; ++d) {
          float acc[4][16] = {};
          for (int64_t j = 0; j < n_keys; ++j) {
            const int64_t s = first + j;
            float& a = acc[(s % 64) / 16][s % 16];
            a = std::fma(kernels::HalfToFloat(values[j][d]), w[g * n_keys + j], a);
          }
          EXPECT_EQ(out[g][d], Combine(acc)) << "keys " << n_keys << " nq " << nq << " g " << g << " d " << d;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ragd::inference
