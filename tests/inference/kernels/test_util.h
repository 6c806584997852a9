// Helpers shared by the kernel tests: random weight rows of every type with
// finite scales, and the list of kernel sets this CPU can run.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "inference/ggml_types.h"
#include "inference/kernels/kernel_set.h"

namespace ragd::inference::testing {

inline const GgmlType kAllTypes[] = {
    GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0,
    GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K,
};

// Offsets of the f16 scale fields inside one block of `type` (none for F32).
inline std::vector<int> HalfFieldOffsets(GgmlType type) {
  switch (type) {
    case GgmlType::kF16:
      return {0};
    case GgmlType::kQ4_0:
    case GgmlType::kQ5_0:
    case GgmlType::kQ8_0:
      return {0};
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
      return {0, 2};
    case GgmlType::kQ6_K:
      return {208};
    default:
      return {};
  }
}

// `rows` rows of n random values of `type`: random quant bytes, scales in a
// range typical of real weights (|d| ~ 1e-3..1e-2).
inline std::vector<uint8_t> RandomRows(GgmlType type, int64_t n, int64_t rows, std::mt19937& rng) {
  const GgmlTypeInfo& info = *GetTypeInfo(static_cast<uint32_t>(type));
  const size_t row_bytes = RowBytes(info, n);
  std::vector<uint8_t> data(row_bytes * rows);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  if (type == GgmlType::kF32) {
    for (size_t i = 0; i < data.size() / 4; ++i) {
      const float f = val(rng);
      std::memcpy(data.data() + 4 * i, &f, 4);
    }
    return data;
  }
  if (type == GgmlType::kBF16) {
    for (size_t i = 0; i < data.size() / 2; ++i) {
      const uint16_t h = kernels::FloatToBf16(val(rng));
      std::memcpy(data.data() + 2 * i, &h, 2);
    }
    return data;
  }
  for (auto& b : data) b = static_cast<uint8_t>(byte(rng));
  const std::vector<int> offsets = HalfFieldOffsets(type);
  for (size_t blk = 0; blk < data.size() / info.type_size; ++blk) {
    for (int off : offsets) {
      const float f = type == GgmlType::kF16 ? val(rng) : val(rng) * 0.01f;
      const uint16_t h = kernels::FloatToHalf(f);
      std::memcpy(data.data() + blk * info.type_size + off, &h, 2);
    }
  }
  return data;
}

inline std::vector<float> RandomFloats(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<const kernels::KernelSet*> SupportedSets() {
  const kernels::KernelSet* sets[8];
  const int n = kernels::SupportedKernelSets(sets, 8);
  return std::vector<const kernels::KernelSet*>(sets, sets + n);
}

}  // namespace ragd::inference::testing
