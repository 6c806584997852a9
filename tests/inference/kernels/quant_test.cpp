// Block layouts: dequantization of hand-built blocks of every type, half/bf16
// conversion, and activation quantization round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "inference/kernels/kernel_set.h"
#include "test_util.h"

namespace ragd::inference {
namespace {

using namespace kernels;

template <typename Block>
std::vector<float> Dequant(GgmlType type, const Block& b, int n) {
  std::vector<float> out(n);
  DequantizeRowRef(type, reinterpret_cast<const uint8_t*>(&b), n, out.data());
  WeightView w{type, reinterpret_cast<const uint8_t*>(&b), n, 1, sizeof(Block)};
  std::vector<float> via_api(n);
  DequantizeRow(w, 0, via_api.data());
  EXPECT_EQ(out, via_api);
  return out;
}

TEST(QuantLayout, Q4_0) {
  BlockQ4_0 b{};
  b.d = FloatToHalf(0.5f);
  std::memset(b.qs, 0x88, 16);  // all zero after the -8 offset
  b.qs[0] = 0x21;
  const auto y = Dequant(GgmlType::kQ4_0, b, 32);
  EXPECT_FLOAT_EQ(y[0], -3.5f);
  EXPECT_FLOAT_EQ(y[16], -3.0f);
  EXPECT_FLOAT_EQ(y[1], 0.0f);
}

TEST(QuantLayout, Q4_1) {
  BlockQ4_1 b{};
  b.d = FloatToHalf(0.25f);
  b.m = FloatToHalf(-1.0f);
  b.qs[3] = 0xF0;
  const auto y = Dequant(GgmlType::kQ4_1, b, 32);
  EXPECT_FLOAT_EQ(y[3], -1.0f);
  EXPECT_FLOAT_EQ(y[19], 2.75f);
  EXPECT_FLOAT_EQ(y[0], -1.0f);
}

TEST(QuantLayout, Q5_0) {
  BlockQ5_0 b{};
  b.d = FloatToHalf(1.0f);
  const uint32_t qh = 1u | 1u << 17;
  std::memcpy(b.qh, &qh, 4);
  b.qs[1] = 0x30;
  const auto y = Dequant(GgmlType::kQ5_0, b, 32);
  EXPECT_FLOAT_EQ(y[0], 0.0f);
  EXPECT_FLOAT_EQ(y[16], -16.0f);
  EXPECT_FLOAT_EQ(y[1], -16.0f);
  EXPECT_FLOAT_EQ(y[17], 3.0f);
}

TEST(QuantLayout, Q5_1) {
  BlockQ5_1 b{};
  b.d = FloatToHalf(2.0f);
  b.m = FloatToHalf(0.5f);
  const uint32_t qh = 1u << 31;
  std::memcpy(b.qh, &qh, 4);
  b.qs[15] = 0x3C;
  const auto y = Dequant(GgmlType::kQ5_1, b, 32);
  EXPECT_FLOAT_EQ(y[31], 2.0f * (3 + 16) + 0.5f);
  EXPECT_FLOAT_EQ(y[15], 2.0f * 12 + 0.5f);
}

TEST(QuantLayout, Q8_0) {
  BlockQ8_0 b{};
  b.d = FloatToHalf(0.125f);
  b.qs[5] = -8;
  b.qs[31] = 127;
  const auto y = Dequant(GgmlType::kQ8_0, b, 32);
  EXPECT_FLOAT_EQ(y[5], -1.0f);
  EXPECT_FLOAT_EQ(y[31], 15.875f);
}

TEST(QuantLayout, Q4_K) {
  BlockQ4_K b{};
  b.d = FloatToHalf(1.0f);
  b.dmin = FloatToHalf(0.5f);
  b.scales[0] = 3;     // sub-block 0: sc 3
  b.scales[4] = 2;     //              min 2
  b.scales[1] = 0x40;  // sub-block 1: sc 0, high bits of sub-block 5's sc = 1
  b.scales[5] = 0x80;  // sub-block 1: min 0, high bits of sub-block 5's min = 2
  b.scales[9] = 0x21;  // sub-block 5: low bits sc 1, min 2 -> sc 17, min 34
  b.qs[0] = 0x05;
  b.qs[64] = 0x70;  // chunk 2, high nibble = sub-block 5
  const auto y = Dequant(GgmlType::kQ4_K, b, 256);
  EXPECT_FLOAT_EQ(y[0], 3 * 5 - 0.5f * 2);
  EXPECT_FLOAT_EQ(y[160], 17 * 7 - 0.5f * 34);
  EXPECT_FLOAT_EQ(y[128], 0.0f);  // sub-block 4: sc 0, min 0
  EXPECT_FLOAT_EQ(y[32], 0.0f);
}

TEST(QuantLayout, Q5_K) {
  BlockQ5_K b{};
  b.d = FloatToHalf(1.0f);
  b.dmin = FloatToHalf(0.5f);
  b.scales[1] = 0x40;
  b.scales[5] = 0x80;
  b.scales[9] = 0x21;
  b.qs[64] = 0x70;
  b.qh[0] = 0x20;  // bit 5: sub-block 5
  b.qh[1] = 0x10;  // bit 4: sub-block 4 (chunk 2 low nibbles)
  const auto y = Dequant(GgmlType::kQ5_K, b, 256);
  EXPECT_FLOAT_EQ(y[160], 17 * (7 + 16) - 0.5f * 34);
  EXPECT_FLOAT_EQ(y[161], 0 - 0.5f * 34);
}

TEST(QuantLayout, Q6_K) {
  BlockQ6_K b{};
  b.d = FloatToHalf(0.5f);
  b.scales[0] = 2;
  b.scales[6] = -3;
  b.scales[8 + 1] = 4;  // second half, values 144..159
  b.ql[0] = 0x01;
  b.ql[32] = 0xA0;
  b.qh[0] = 0xC0;
  b.ql[64 + 16] = 0x07;  // second half, l = 16: value 128 + 16
  b.qh[32 + 16] = 0x02;
  const auto y = Dequant(GgmlType::kQ6_K, b, 256);
  EXPECT_FLOAT_EQ(y[0], 0.5f * 2 * (1 - 32));
  EXPECT_FLOAT_EQ(y[96], 0.5f * -3 * (58 - 32));
  EXPECT_FLOAT_EQ(y[144], 0.5f * 4 * ((7 | 32) - 32));
}

TEST(QuantLayout, HalfAndBf16) {
  const uint16_t h[3] = {0x3C00, 0xC000, 0x0001};
  std::vector<float> y(3);
  DequantizeRowRef(GgmlType::kF16, reinterpret_cast<const uint8_t*>(h), 3, y.data());
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], -2.0f);
  EXPECT_FLOAT_EQ(y[2], std::ldexp(1.0f, -24));
  const uint16_t bf[2] = {0x3F80, 0xC0A0};
  DequantizeRowRef(GgmlType::kBF16, reinterpret_cast<const uint8_t*>(bf), 2, y.data());
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], -5.0f);
}

TEST(QuantLayout, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    if ((h & 0x7C00) == 0x7C00) continue;  // inf / NaN
    ASSERT_EQ(FloatToHalf(HalfToFloat(h)), h) << i;
  }
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 4096), 0x3C00);  // ties to even
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
}

TEST(ActivationQuant, Q8ARoundTrip) {
  std::mt19937 rng(1);
  auto x = testing::RandomFloats(256, rng, 3.0f);
  x[7] = 0;
  std::vector<BlockQ8A> q(8);
  QuantizeQ8ARef(x.data(), 256, q.data());
  for (int b = 0; b < 8; ++b) {
    int sum = 0;
    float amax = 0;
    for (int j = 0; j < 32; ++j) {
      sum += q[b].qs[j];
      amax = std::max(amax, std::fabs(x[32 * b + j]));
      // d is amax/127 rounded to half: up to 127 * 2^-11 relative off.
      EXPECT_NEAR(q[b].d * q[b].qs[j], x[32 * b + j], q[b].d * 0.57f + 1e-6f);
    }
    EXPECT_EQ(sum, q[b].sum);
    // llama.cpp's values: d = half(amax/127), q = round-half-even(x * 127/amax).
    EXPECT_EQ(q[b].d, HalfToFloat(FloatToHalf(amax / 127)));
    for (int j = 0; j < 32; ++j) {
      EXPECT_EQ(q[b].qs[j], static_cast<int>(std::nearbyintf(x[32 * b + j] * (127.0f / amax))));
    }
  }
  std::vector<float> zero(32, 0.0f);
  QuantizeQ8ARef(zero.data(), 32, q.data());
  EXPECT_EQ(q[0].d, 0.0f);
  EXPECT_EQ(q[0].qs[0], 0);
}

TEST(ActivationQuant, Q8KRoundTrip) {
  std::mt19937 rng(2);
  auto x = testing::RandomFloats(512, rng, 0.5f);
  std::vector<BlockQ8K> q(2);
  QuantizeQ8KRef(x.data(), 512, q.data());
  for (int b = 0; b < 2; ++b) {
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) {
        const int i = 16 * g + j;
        sum += q[b].qs[i];
        EXPECT_NEAR(q[b].d * q[b].qs[i], x[256 * b + i], std::fabs(q[b].d) * 0.5f + 1e-6f);
      }
      EXPECT_EQ(sum, q[b].bsums[g]);
    }
    // llama.cpp's scale: the value of largest magnitude maps to -127 and
    // d = 1/(-127/max) (negative when that value is positive).
    int arg = 0;
    for (int i = 1; i < 256; ++i) {
      if (std::fabs(x[256 * b + i]) > std::fabs(x[256 * b + arg])) arg = i;
    }
    EXPECT_EQ(q[b].qs[arg], -127);
    EXPECT_EQ(q[b].d, 1.0f / (-127.0f / x[256 * b + arg]));
  }
}

// The integer dot product of every type equals the float dot of the
// dequantized weights with the dequantized activations.
TEST(ReferenceDot, MatchesDequantizedFloatDot) {
  std::mt19937 rng(3);
  const int64_t n = 512;
  for (GgmlType type : testing::kAllTypes) {
    SCOPED_TRACE(GetTypeInfo(static_cast<uint32_t>(type))->name);
    const auto w = testing::RandomRows(type, n, 1, rng);
    const auto x = testing::RandomFloats(n, rng);
    std::vector<float> wf(n), xf(x);
    DequantizeRowRef(type, w.data(), n, wf.data());
    std::vector<uint8_t> act(ActRowBytes(type, n));
    if (ActKindFor(type) == ActKind::kQ8A) {
      auto* q = reinterpret_cast<BlockQ8A*>(act.data());
      QuantizeQ8ARef(x.data(), n, q);
      for (int64_t i = 0; i < n; ++i) xf[i] = q[i / 32].d * q[i / 32].qs[i % 32];
    } else if (ActKindFor(type) == ActKind::kQ8K) {
      auto* q = reinterpret_cast<BlockQ8K*>(act.data());
      QuantizeQ8KRef(x.data(), n, q);
      for (int64_t i = 0; i < n; ++i) xf[i] = q[i / 256].d * q[i / 256].qs[i % 256];
    } else {
      std::memcpy(act.data(), x.data(), n * 4);
    }
    double want = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      want += static_cast<double>(wf[i]) * xf[i];
      mag += std::fabs(static_cast<double>(wf[i]) * xf[i]);
    }
    const float got = VecDotRef(type, n, w.data(), act.data());
    EXPECT_NEAR(got, want, 1e-5 * mag + 1e-6);
  }
}

}  // namespace
}  // namespace ragd::inference
