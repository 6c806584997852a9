// Weight encodings for the tiny test models (tiny_gemma, tiny_llama_family):
// float matrices into the GGUF block layouts of a few ggml types, and those
// bytes back into the floats a reference forward pass multiplies by. Both
// directions are written from the block formats (ggml's block_q4_0, block_q5_0,
// block_q8_0, block_q4_K, block_q6_K), not from the engine's kernels. The
// encoders only need to be reasonable, not llama.cpp's: whatever they choose,
// the reference reads the same bytes back. Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ragd::testing {

// ggml type ids as GGUF stores them.
enum TinyType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ5_0 = 6, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14 };

// Values per block of a type (1 for F32 and F16).
inline int BlockValues(TinyType type) {
  switch (type) {
    case kQ4_K:
    case kQ6_K:
      return 256;
    case kQ4_0:
    case kQ5_0:
    case kQ8_0:
      return 32;
    default:
      return 1;
  }
}

// float -> IEEE half by truncation (no overflow check: the tiny models'
// values are far below 65504), and back. Subnormal halves matter: K-quant
// super-block scales of small weights fall below 2^-14.
inline uint16_t ToHalf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000;
  const int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  if (exp < -10) return static_cast<uint16_t>(sign);
  if (exp <= 0) return static_cast<uint16_t>(sign | (((b & 0x7fffff) | 0x800000) >> (14 - exp)));
  return static_cast<uint16_t>(sign | (exp << 10) | ((b >> 13) & 0x3ff));
}
inline float FromHalf(uint16_t h) {
  const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) return (h & 0x8000 ? -1.f : 1.f) * static_cast<float>(man) * (1.f / 16777216.f);
  const uint32_t b = ((h & 0x8000u) << 16) | ((exp - 15 + 127) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

namespace tiny_quant_internal {

inline void PutHalf(std::vector<uint8_t>& out, float f) {
  const uint16_t h = ToHalf(f);
  out.push_back(h & 0xff);
  out.push_back(h >> 8);
}
inline float GetHalf(const uint8_t* p) { return FromHalf(static_cast<uint16_t>(p[0] | (p[1] << 8))); }
inline float AbsMax(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}
inline int Quantize(float x, float d, int lo, int hi) {
  return d == 0 ? 0 : std::clamp(static_cast<int>(std::lround(x / d)), lo, hi);
}

// Symmetric 32-value blocks: a half scale d = amax / qmax, values d * q.
inline void EncodeLegacy(TinyType type, const float* x, std::vector<uint8_t>& out) {
  const int qmax = type == kQ8_0 ? 127 : type == kQ5_0 ? 15 : 7;
  const int qmin = type == kQ8_0 ? -127 : type == kQ5_0 ? -16 : -8;
  const float d = FromHalf(ToHalf(AbsMax(x, 32) / qmax));
  PutHalf(out, d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = Quantize(x[j], d, qmin, qmax);
  if (type == kQ8_0) {
    for (int j = 0; j < 32; ++j) out.push_back(static_cast<uint8_t>(static_cast<int8_t>(q[j])));
  } else if (type == kQ4_0) {
    for (int j = 0; j < 16; ++j) out.push_back(static_cast<uint8_t>((q[j] + 8) | ((q[j + 16] + 8) << 4)));
  } else {  // Q5_0: 4 low bits in qs (j and j + 16 share a byte), the fifth in qh
    uint32_t qh = 0;
    for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>(((q[j] + 16) >> 4) & 1) << j;
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(qh >> (8 * b)));
    for (int j = 0; j < 16; ++j)
      out.push_back(static_cast<uint8_t>(((q[j] + 16) & 0xf) | (((q[j + 16] + 16) & 0xf) << 4)));
  }
}

// Q4_K: 8 sub-blocks of 32, value = d * sc[s] * q - dmin * m[s], q in 0..15,
// sc and m 6 bits each, packed in 12 bytes.
inline void EncodeQ4K(const float* x, std::vector<uint8_t>& out) {
  float scale[8], min[8], max_scale = 0, max_min = 0;
  for (int s = 0; s < 8; ++s) {
    float lo = 0, hi = 0;
    for (int j = 0; j < 32; ++j) lo = std::min(lo, x[32 * s + j]), hi = std::max(hi, x[32 * s + j]);
    scale[s] = (hi - lo) / 15;
    min[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  const float d = FromHalf(ToHalf(max_scale / 63)), dmin = FromHalf(ToHalf(max_min / 63));
  uint8_t sc[8], m[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = static_cast<uint8_t>(Quantize(scale[s], d, 0, 63));
    m[s] = static_cast<uint8_t>(Quantize(min[s], dmin, 0, 63));
  }
  PutHalf(out, d);
  PutHalf(out, dmin);
  uint8_t packed[12];
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xf) | ((m[j + 4] & 0xf) << 4));
  }
  out.insert(out.end(), packed, packed + 12);
  int q[256];
  for (int s = 0; s < 8; ++s) {
    for (int j = 0; j < 32; ++j) q[32 * s + j] = Quantize(x[32 * s + j] + dmin * m[s], d * sc[s], 0, 15);
  }
  for (int c = 0; c < 4; ++c) {  // 64 values: low nibbles the first 32, high the next
    for (int l = 0; l < 32; ++l)
      out.push_back(static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4)));
  }
}

// Q6_K: 16 sub-blocks of 16, value = d * sc[v / 16] * (q - 32), q 6 bits
// (4 in ql, 2 in qh), sc signed bytes.
inline void EncodeQ6K(const float* x, std::vector<uint8_t>& out) {
  float scale[16], max_scale = 0;
  for (int g = 0; g < 16; ++g) {
    scale[g] = AbsMax(x + 16 * g, 16) / 31;
    max_scale = std::max(max_scale, scale[g]);
  }
  const float d = FromHalf(ToHalf(max_scale / 127));
  int8_t sc[16];
  int q[256];
  for (int g = 0; g < 16; ++g) {
    sc[g] = static_cast<int8_t>(Quantize(scale[g], d, -128, 127));
    for (int j = 0; j < 16; ++j) q[16 * g + j] = Quantize(x[16 * g + j], d * sc[g], -32, 31) + 32;
  }
  uint8_t ql[128] = {}, qh[64] = {};
  for (int n = 0; n < 2; ++n) {
    for (int l = 0; l < 32; ++l) {
      const int* v = q + 128 * n;
      ql[64 * n + l] = static_cast<uint8_t>((v[l] & 0xf) | ((v[l + 64] & 0xf) << 4));
      ql[64 * n + l + 32] = static_cast<uint8_t>((v[l + 32] & 0xf) | ((v[l + 96] & 0xf) << 4));
      qh[32 * n + l] = static_cast<uint8_t>((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) |
                                            ((v[l + 96] >> 4) << 6));
    }
  }
  out.insert(out.end(), ql, ql + 128);
  out.insert(out.end(), qh, qh + 64);
  for (int g = 0; g < 16; ++g) out.push_back(static_cast<uint8_t>(sc[g]));
  PutHalf(out, d);
}

}  // namespace tiny_quant_internal

// The bytes of `v` (rows whose length is a multiple of the type's block) in
// `type`'s GGUF layout.
inline std::vector<uint8_t> EncodeTensor(TinyType type, const std::vector<float>& v) {
  namespace in = tiny_quant_internal;
  std::vector<uint8_t> out;
  if (type == kF32) {
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  }
  if (type == kF16) {
    for (float f : v) in::PutHalf(out, f);
    return out;
  }
  const size_t block = BlockValues(type);
  for (size_t b = 0; b < v.size(); b += block) {
    if (type == kQ4_K) {
      in::EncodeQ4K(v.data() + b, out);
    } else if (type == kQ6_K) {
      in::EncodeQ6K(v.data() + b, out);
    } else {
      in::EncodeLegacy(type, v.data() + b, out);
    }
  }
  return out;
}

// The n values that `bytes` (in `type`'s layout) hold.
inline std::vector<float> DecodeTensor(TinyType type, const std::vector<uint8_t>& bytes, size_t n) {
  namespace in = tiny_quant_internal;
  std::vector<float> v(n);
  const uint8_t* p = bytes.data();
  if (type == kF32) {
    std::memcpy(v.data(), p, n * 4);
    return v;
  }
  if (type == kF16) {
    for (size_t i = 0; i < n; ++i) v[i] = in::GetHalf(p + 2 * i);
    return v;
  }
  const size_t block = BlockValues(type);
  for (size_t b = 0; b < n; b += block) {
    float* y = v.data() + b;
    if (type == kQ8_0) {
      const float d = in::GetHalf(p);
      for (int j = 0; j < 32; ++j) y[j] = d * static_cast<int8_t>(p[2 + j]);
      p += 34;
    } else if (type == kQ4_0) {
      const float d = in::GetHalf(p);
      for (int j = 0; j < 16; ++j) {
        y[j] = d * ((p[2 + j] & 0xf) - 8);
        y[j + 16] = d * ((p[2 + j] >> 4) - 8);
      }
      p += 18;
    } else if (type == kQ5_0) {
      const float d = in::GetHalf(p);
      const uint32_t qh = p[2] | (p[3] << 8) | (p[4] << 16) | (static_cast<uint32_t>(p[5]) << 24);
      for (int j = 0; j < 16; ++j) {
        y[j] = d * (static_cast<int>((p[6 + j] & 0xf) | (((qh >> j) & 1) << 4)) - 16);
        y[j + 16] = d * (static_cast<int>((p[6 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16);
      }
      p += 22;
    } else if (type == kQ4_K) {
      const float d = in::GetHalf(p), dmin = in::GetHalf(p + 2);
      const uint8_t* s = p + 4;
      for (int sub = 0; sub < 8; ++sub) {
        const int sc = sub < 4 ? s[sub] & 63 : (s[sub + 4] & 0xf) | ((s[sub - 4] >> 6) << 4);
        const int m = sub < 4 ? s[sub + 4] & 63 : (s[sub + 4] >> 4) | ((s[sub] >> 6) << 4);
        const uint8_t* qs = p + 16 + 32 * (sub / 2);
        for (int l = 0; l < 32; ++l) {
          const int q = sub % 2 == 0 ? qs[l] & 0xf : qs[l] >> 4;
          y[32 * sub + l] = d * sc * q - dmin * m;
        }
      }
      p += 144;
    } else if (type == kQ6_K) {
      const uint8_t *ql = p, *qh = p + 128;
      const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
      const float d = in::GetHalf(p + 208);
      for (int n = 0; n < 2; ++n) {
        for (int l = 0; l < 32; ++l) {
          const uint8_t a = ql[64 * n + l], c = ql[64 * n + l + 32], h = qh[32 * n + l];
          const int q[4] = {(a & 0xf) | ((h & 3) << 4), (c & 0xf) | (((h >> 2) & 3) << 4),
                            (a >> 4) | (((h >> 4) & 3) << 4), (c >> 4) | (((h >> 6) & 3) << 4)};
          for (int k = 0; k < 4; ++k) {
            const int idx = 128 * n + 32 * k + l;
            y[idx] = d * sc[idx / 16] * (q[k] - 32);
          }
        }
      }
      p += 210;
    }
  }
  return v;
}

}  // namespace ragd::testing
