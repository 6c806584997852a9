// GGUF reader: parses and validates a model file mapped read-only in memory.
//
// Format (little-endian), described here once:
//   u32 magic "GGUF" | u32 version (2 or 3) | u64 tensor_count | u64 kv_count
//   kv_count x { string key | u32 value_type | value }
//   tensor_count x { string name | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset }
//   zero padding to `general.alignment` (default 32) | tensor data
// A string is u64 length + bytes. Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32,
// 5 i32, 6 f32, 7 bool, 8 string, 9 array (u32 elem type, u64 count, elems),
// 10 u64, 11 i64, 12 f64. `ne[0]` is the fastest-varying dimension, and tensor
// offsets are relative to the start of the data section.
//
// Open() checks every length and offset against the file size, so a truncated
// or corrupted file is an error value, never an out-of-bounds read. Tensors of
// a type the engine has no kernels for are reported by name on Open.
// A GgufFile is immutable after Open and safe to read from many threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/mapped_file.h"
#include "common/status.h"
#include "inference/ggml_types.h"

namespace ragd::inference {

enum class GgufValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// One metadata value. Scalars use `num` (integers and bools are exact up to
// 2^53, which covers every key a model carries) or `str`; arrays of strings use
// `strings`, arrays of numbers `numbers`. Nested arrays keep only their length.
struct GgufValue {
  GgufValueType type = GgufValueType::kU8;
  double num = 0;
  std::string str;
  GgufValueType elem_type = GgufValueType::kU8;  // arrays only
  uint64_t array_size = 0;                       // arrays only
  std::vector<std::string> strings;
  std::vector<double> numbers;

  bool is_integer() const;
};

struct GgufTensor {
  std::string name;
  uint32_t n_dims = 0;
  uint64_t ne[4] = {1, 1, 1, 1};
  GgmlType type = GgmlType::kF32;
  const GgmlTypeInfo* info = nullptr;
  uint64_t offset = 0;  // relative to the data section
  const uint8_t* data = nullptr;
  size_t n_bytes = 0;

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return RowBytes(*info, ne[0]); }
  uint64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
};

struct GgufOpenOptions {
  // Reject tensors whose type has no kernels (true for loading a model to run;
  // model-info sets it to false to describe any file).
  bool require_supported_types = true;
};

class GgufFile {
 public:
  static Result<GgufFile> Open(const std::string& path, const GgufOpenOptions& options = {});

  uint32_t version() const { return version_; }
  size_t file_size() const { return file_.size(); }
  uint32_t alignment() const { return alignment_; }
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

  const GgufValue* Find(const std::string& key) const;
  const GgufTensor* FindTensor(const std::string& name) const;

  // Typed look-ups; nullopt when absent or of an incompatible type (GetInt:
  // also a u64 too large for int64).
  std::optional<int64_t> GetInt(const std::string& key) const;
  std::optional<double> GetFloat(const std::string& key) const;
  std::optional<std::string> GetString(const std::string& key) const;

  // "general.architecture", or "" when absent.
  std::string architecture() const;

  // Once the metadata's users have copied what they need: frees the elements
  // of every metadata array (for a 262k-token vocabulary, tens of MiB; the
  // arrays' sizes stay) and drops the mapped header (keys, vocabulary, tensor
  // table: everything before the tensor data) from resident memory. Not
  // thread-safe: call before sharing the file.
  void ReleaseMetadata();

  // Drops the whole pages of [begin, end), bytes of this file's mapping,
  // from resident memory (they are read back if touched again): for tensor
  // data copied elsewhere, e.g. a packed weight. Thread-safe.
  void DropData(const uint8_t* begin, const uint8_t* end) const;

 private:
  MappedFile file_;
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  size_t data_start_ = 0;  // where the tensor data begins
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace ragd::inference
