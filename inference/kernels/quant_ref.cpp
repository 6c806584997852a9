// Scalar reference kernels: dequantization of every weight type, activation
// quantization, and integer dot products of weight rows with activation rows.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "inference/kernels/kernel_set.h"

namespace ragd::inference::kernels {
namespace {

// The 256 unsigned quants of a Q5_K block in value order.
void UnpackQ5K(const BlockQ5_K& b, uint8_t* q) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = static_cast<uint8_t>((b.qs[32 * c + l] & 15) | ((b.qh[l] >> (2 * c)) & 1) << 4);
      q[64 * c + 32 + l] =
          static_cast<uint8_t>((b.qs[32 * c + l] >> 4) | ((b.qh[l] >> (2 * c + 1)) & 1) << 4);
    }
  }
}

int32_t DotU8I8(const uint8_t* q, const int8_t* a, int n) {
  int32_t s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<int32_t>(q[i]) * a[i];
  return s;
}

template <typename Block, void (*Unpack)(const Block&, uint8_t*), int kOffset, bool kHasMin>
float DotLegacy(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* w = reinterpret_cast<const Block*>(w_row);
  const auto* a = reinterpret_cast<const BlockQ8A*>(act_row);
  float sum = 0;
  uint8_t q[32];
  for (int64_t b = 0; b < n / kQK; ++b) {
    Unpack(w[b], q);
    const int32_t isum = DotU8I8(q, a[b].qs, 32) - kOffset * a[b].sum;
    sum += HalfToFloat(w[b].d) * a[b].d * static_cast<float>(isum);
    if constexpr (kHasMin) sum += HalfToFloat(w[b].m) * a[b].d * static_cast<float>(a[b].sum);
  }
  return sum;
}

float DotQ8_0(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* w = reinterpret_cast<const BlockQ8_0*>(w_row);
  const auto* a = reinterpret_cast<const BlockQ8A*>(act_row);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < 32; ++j) isum += static_cast<int32_t>(w[b].qs[j]) * a[b].qs[j];
    sum += HalfToFloat(w[b].d) * a[b].d * static_cast<float>(isum);
  }
  return sum;
}

template <typename Block, void (*Unpack)(const Block&, uint8_t*)>
float DotQ45K(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* w = reinterpret_cast<const Block*>(w_row);
  const auto* a = reinterpret_cast<const BlockQ8K*>(act_row);
  float sum = 0;
  uint8_t q[256];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    Unpack(w[b], q);
    int32_t scaled = 0, mins = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, mn;
      UnpackScaleMin(j, w[b].scales, &sc, &mn);
      scaled += sc * DotU8I8(q + 32 * j, a[b].qs + 32 * j, 32);
      mins += mn * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
    }
    sum += a[b].d * (HalfToFloat(w[b].d) * static_cast<float>(scaled) -
                     HalfToFloat(w[b].dmin) * static_cast<float>(mins));
  }
  return sum;
}

float DotQ6K(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(w_row);
  const auto* a = reinterpret_cast<const BlockQ8K*>(act_row);
  float sum = 0;
  uint8_t q[256];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    UnpackQ6K(w[b], q);
    int32_t scaled = 0;
    for (int j = 0; j < 16; ++j) {
      scaled += w[b].scales[j] * (DotU8I8(q + 16 * j, a[b].qs + 16 * j, 16) - 32 * a[b].bsums[j]);
    }
    sum += a[b].d * HalfToFloat(w[b].d) * static_cast<float>(scaled);
  }
  return sum;
}

template <float (*ToFloat)(uint16_t)>
float DotHalfF32(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* a = reinterpret_cast<const float*>(act_row);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, w_row + 2 * i, 2);
    sum += ToFloat(h) * a[i];
  }
  return sum;
}

float DotF32(int64_t n, const uint8_t* w_row, const uint8_t* act_row) {
  const auto* a = reinterpret_cast<const float*>(act_row);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, w_row + 4 * i, 4);
    sum += v * a[i];
  }
  return sum;
}

template <typename Block, void (*Unpack)(const Block&, uint8_t*), int kOffset, bool kHasMin>
void DequantLegacy(const uint8_t* row, int64_t n, float* out) {
  const auto* w = reinterpret_cast<const Block*>(row);
  uint8_t q[32];
  for (int64_t b = 0; b < n / kQK; ++b) {
    Unpack(w[b], q);
    const float d = HalfToFloat(w[b].d);
    float m = 0;
    if constexpr (kHasMin) m = HalfToFloat(w[b].m);
    for (int j = 0; j < 32; ++j) out[32 * b + j] = d * static_cast<float>(q[j] - kOffset) + m;
  }
}

template <typename Block, void (*Unpack)(const Block&, uint8_t*)>
void DequantQ45K(const uint8_t* row, int64_t n, float* out) {
  const auto* w = reinterpret_cast<const Block*>(row);
  uint8_t q[256];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    Unpack(w[b], q);
    const float d = HalfToFloat(w[b].d), dmin = HalfToFloat(w[b].dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, mn;
      UnpackScaleMin(j, w[b].scales, &sc, &mn);
      for (int l = 0; l < 32; ++l) out[256 * b + 32 * j + l] = d * sc * q[32 * j + l] - dmin * mn;
    }
  }
}

void DequantQ6K(const uint8_t* row, int64_t n, float* out) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(row);
  uint8_t q[256];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    UnpackQ6K(w[b], q);
    const float d = HalfToFloat(w[b].d);
    for (int i = 0; i < 256; ++i) out[256 * b + i] = d * w[b].scales[i / 16] * (q[i] - 32);
  }
}

}  // namespace

ActKind ActKindFor(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return ActKind::kF32;
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
      return ActKind::kQ8A;
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      return ActKind::kQ8K;
    default:
      return ActKind::kUnsupported;
  }
}

size_t ActRowBytes(GgmlType type, int64_t n) {
  switch (ActKindFor(type)) {
    case ActKind::kF32:
      return static_cast<size_t>(n) * sizeof(float);
    case ActKind::kQ8A:
      return static_cast<size_t>(n / kQK) * sizeof(BlockQ8A);
    case ActKind::kQ8K:
      return static_cast<size_t>(n / kQKK) * sizeof(BlockQ8K);
    default:
      return 0;
  }
}

void DequantizeRowRef(GgmlType type, const uint8_t* row, int64_t n, float* out) {
  switch (type) {
    case GgmlType::kF32:
      std::memcpy(out, row, static_cast<size_t>(n) * 4);
      return;
    case GgmlType::kF16:
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, row + 2 * i, 2);
        out[i] = type == GgmlType::kF16 ? HalfToFloat(h) : Bf16ToFloat(h);
      }
      return;
    case GgmlType::kQ4_0:
      return DequantLegacy<BlockQ4_0, UnpackNibbleQuants<BlockQ4_0>, 8, false>(row, n, out);
    case GgmlType::kQ4_1:
      return DequantLegacy<BlockQ4_1, UnpackNibbleQuants<BlockQ4_1>, 0, true>(row, n, out);
    case GgmlType::kQ5_0:
      return DequantLegacy<BlockQ5_0, UnpackQ5Quants<BlockQ5_0>, 16, false>(row, n, out);
    case GgmlType::kQ5_1:
      return DequantLegacy<BlockQ5_1, UnpackQ5Quants<BlockQ5_1>, 0, true>(row, n, out);
    case GgmlType::kQ8_0: {
      const auto* w = reinterpret_cast<const BlockQ8_0*>(row);
      for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = HalfToFloat(w[b].d);
        for (int j = 0; j < 32; ++j) out[32 * b + j] = d * w[b].qs[j];
      }
      return;
    }
    case GgmlType::kQ4_K:
      return DequantQ45K<BlockQ4_K, UnpackQ4K>(row, n, out);
    case GgmlType::kQ5_K:
      return DequantQ45K<BlockQ5_K, UnpackQ5K>(row, n, out);
    case GgmlType::kQ6_K:
      return DequantQ6K(row, n, out);
    default:
      assert(false && "DequantizeRow: unsupported type");
  }
}

void QuantizeQ8ARef(const float* x, int64_t n, BlockQ8A* out) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* v = x + kQK * b;
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(v[j]));
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = static_cast<int>(std::nearbyintf(v[j] * id));
      out[b].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    out[b].d = Q8AScale(amax);
    out[b].sum = sum;
  }
}

void QuantizeQ8KRef(const float* x, int64_t n, BlockQ8K* out) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* v = x + kQKK * b;
    const float max = SignedAbsMax(v, kQKK);
    const float iscale = max != 0 ? -127.0f / max : 0.0f;
    for (int j = 0; j < kQKK; ++j) {
      out[b].qs[j] = static_cast<int8_t>(std::min(127.0f, std::nearbyintf(v[j] * iscale)));
    }
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int j = 0; j < 16; ++j) s += out[b].qs[16 * g + j];
      out[b].bsums[g] = static_cast<int16_t>(s);
    }
    out[b].d = max != 0 ? 1.0f / iscale : 0.0f;
  }
}

float VecDotRef(GgmlType type, int64_t n, const uint8_t* w, const uint8_t* a) {
  switch (type) {
    case GgmlType::kF32:
      return DotF32(n, w, a);
    case GgmlType::kF16:
      return DotHalfF32<HalfToFloat>(n, w, a);
    case GgmlType::kBF16:
      return DotHalfF32<Bf16ToFloat>(n, w, a);
    case GgmlType::kQ4_0:
      return DotLegacy<BlockQ4_0, UnpackNibbleQuants<BlockQ4_0>, 8, false>(n, w, a);
    case GgmlType::kQ4_1:
      return DotLegacy<BlockQ4_1, UnpackNibbleQuants<BlockQ4_1>, 0, true>(n, w, a);
    case GgmlType::kQ5_0:
      return DotLegacy<BlockQ5_0, UnpackQ5Quants<BlockQ5_0>, 16, false>(n, w, a);
    case GgmlType::kQ5_1:
      return DotLegacy<BlockQ5_1, UnpackQ5Quants<BlockQ5_1>, 0, true>(n, w, a);
    case GgmlType::kQ8_0:
      return DotQ8_0(n, w, a);
    case GgmlType::kQ4_K:
      return DotQ45K<BlockQ4_K, UnpackQ4K>(n, w, a);
    case GgmlType::kQ5_K:
      return DotQ45K<BlockQ5_K, UnpackQ5K>(n, w, a);
    case GgmlType::kQ6_K:
      return DotQ6K(n, w, a);
    default:
      assert(false && "VecDot: unsupported type");
      return 0;
  }
}

void MulRowsRef(const WeightView& w, const uint8_t* act, size_t act_stride, int64_t m,
                const void* /*prepared*/, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* w_row = w.data + static_cast<size_t>(r) * w.row_bytes;
    for (int64_t c = 0; c < m; ++c) {
      y[c * ldy + r] = VecDotRef(w.type, w.n_in, w_row, act + static_cast<size_t>(c) * act_stride);
    }
  }
}

const KernelSet kScalarKernels = {"scalar", QuantizeQ8ARef, QuantizeQ8KRef, VecDotRef, nullptr, MulRowsRef};

}  // namespace ragd::inference::kernels
