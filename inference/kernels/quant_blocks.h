// Block layouts of the GGUF weight types and of the quantized activations the
// kernels multiply them with. Internal to inference/kernels.
//
// Weight blocks (little-endian, packed, exactly as stored in a GGUF file; "f16"
// is an IEEE half):
//   Q4_0  32 values, 18 B: f16 d | u8 qs[16]. v[j] = d*((qs[j]&15)-8),
//         v[j+16] = d*((qs[j]>>4)-8).
//   Q4_1  32 values, 20 B: f16 d, f16 m | u8 qs[16]. v = d*q + m.
//   Q5_0  32 values, 22 B: f16 d | u32 qh | u8 qs[16]. The 5th bit of v[j] is
//         bit j of qh, of v[j+16] bit j+16; v = d*(q-16).
//   Q5_1  32 values, 24 B: f16 d, f16 m | u32 qh | u8 qs[16]. v = d*q + m.
//   Q8_0  32 values, 34 B: f16 d | i8 qs[32]. v = d*q.
//   Q4_K 256 values, 144 B: f16 d, f16 dmin | u8 scales[12] | u8 qs[128].
//         Eight sub-blocks of 32 with 6-bit scale sc and min mn (UnpackScaleMin);
//         64-value chunk c uses qs[32c..32c+31], low nibbles = sub-block 2c,
//         high nibbles = 2c+1. v = d*sc*q - dmin*mn.
//   Q5_K 256 values, 176 B: f16 d, f16 dmin | u8 scales[12] | u8 qh[32] |
//         u8 qs[128]. As Q4_K plus 16*bit: sub-block 2c takes bit 2c of qh[l],
//         sub-block 2c+1 bit 2c+1.
//   Q6_K 256 values, 210 B: u8 ql[128] | u8 qh[64] | i8 scales[16] | f16 d.
//         Half h (128 values) uses ql+64h, qh+32h, scales+8h; for l < 32:
//         v[l]    = lo(ql[l])    | ((qh[l]>>0)&3)<<4, scale l/16
//         v[l+32] = lo(ql[l+32]) | ((qh[l]>>2)&3)<<4, scale l/16+2
//         v[l+64] = hi(ql[l])    | ((qh[l]>>4)&3)<<4, scale l/16+4
//         v[l+96] = hi(ql[l+32]) | ((qh[l]>>6)&3)<<4, scale l/16+6
//         value = d*sc*(q-32).
//
// Activation blocks (our own layout, built once per activation row), with
// the values of llama.cpp's x86 CPU backend (its Q8_0 and Q8_K blocks):
//   BlockQ8A: 32 values: f32 d = amax/127 rounded to an IEEE half (llama.cpp
//             stores it as one), q = round-half-even(x * (127/amax)), i32 sum =
//             sum of qs, i8 qs[32]; x ~= d*q. Partner of Q4_0, Q4_1, Q5_0, Q5_1,
//             Q8_0.
//   BlockQ8K: 256 values: max = the value of largest magnitude (first one,
//             sign kept), iscale = -127/max, q = min(127, round-half-even(x *
//             iscale)), f32 d = 1/iscale; i8 qs[256], i16 bsums[16] (sum of
//             each 16 qs); x ~= d*q. Partner of Q4_K, Q5_K, Q6_K.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/half.h"

namespace ragd::inference::kernels {

inline constexpr int kQK = 32;    // values per block of the legacy types
inline constexpr int kQKK = 256;  // values per super-block of the K types

#pragma pack(push, 1)
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
#pragma pack(pop)

struct BlockQ8A {
  float d;
  int32_t sum;
  int8_t qs[32];
};
struct BlockQ8K {
  float d;
  int8_t qs[256];
  int16_t bsums[16];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8A) == 40 && sizeof(BlockQ8K) == 292);

// The 32 unsigned quants of a legacy block in value order: 0..15 (Q4_0,
// Q4_1) or 0..31 (Q5_0, Q5_1).
template <typename Block>
void UnpackNibbleQuants(const Block& b, uint8_t* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = b.qs[j] & 15;
    q[j + 16] = b.qs[j] >> 4;
  }
}
template <typename Block>
void UnpackQ5Quants(const Block& b, uint8_t* q) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  UnpackNibbleQuants(b, q);
  for (int j = 0; j < 32; ++j) q[j] |= ((qh >> j) & 1) << 4;
}

// The 256 unsigned quants (0..15) of a Q4_K block in value order.
inline void UnpackQ4K(const BlockQ4_K& b, uint8_t* q) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = b.qs[32 * c + l] & 15;
      q[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
    }
  }
}

// The 256 quants (0..63) of a Q6_K block in value order.
inline void UnpackQ6K(const BlockQ6_K& b, uint8_t* q) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    uint8_t* y = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      y[l] = static_cast<uint8_t>((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4);
      y[l + 32] = static_cast<uint8_t>((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4);
      y[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
      y[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
    }
  }
}

using ragd::Bf16ToFloat;
using ragd::FloatToBf16;
using ragd::FloatToHalf;
using ragd::HalfToFloat;

// BlockQ8A.d for a block whose largest magnitude is amax: amax/127 rounded
// to the nearest half (ties to even), as a float.
inline float Q8AScale(float amax) { return HalfToFloat(FloatToHalf(amax / 127.0f)); }

// The value of largest magnitude among x[0..n) (the first such, sign kept;
// 0 for an all-zero block), the Q8_K scale reference.
inline float SignedAbsMax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j) {
    const float ax = x[j] < 0 ? -x[j] : x[j];
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  return max;
}

// 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
inline void UnpackScaleMin(int j, const uint8_t* s, uint8_t* sc, uint8_t* mn) {
  if (j < 4) {
    *sc = s[j] & 63;
    *mn = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *mn = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace ragd::inference::kernels
