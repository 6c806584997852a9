// Tensor element types of the GGUF/ggml format and their block geometry.
//
// A quantized tensor row of `ne0` elements is `ne0 / block_size` blocks of
// `type_size` bytes each. The numeric ids are fixed by the file format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ragd::inference {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};

struct GgmlTypeInfo {
  std::string_view name;  // "Q4_K", as llama.cpp prints it
  int block_size;         // elements per block (1 for plain types)
  int type_size;          // bytes per block
  bool supported;         // the engine has kernels for it
};

// Geometry of `type`, or nullptr when the id is not a known ggml type.
const GgmlTypeInfo* GetTypeInfo(uint32_t type);

// The name llama.cpp gives a file's general.file_type ("Q4_K_M"), or "" for
// an id it does not know.
std::string_view FileTypeName(int64_t file_type);

// Bytes of one row of `ne0` elements; ne0 must be a multiple of block_size.
inline size_t RowBytes(const GgmlTypeInfo& info, uint64_t ne0) {
  return static_cast<size_t>(ne0 / info.block_size) * info.type_size;
}

}  // namespace ragd::inference
