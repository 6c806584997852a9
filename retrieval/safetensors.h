// safetensors reader over a read-only memory map.
//
// Format, described here once: u64 little-endian header length N, N bytes of
// UTF-8 JSON, then the raw tensor data. The JSON maps each tensor name to
// {"dtype": "F32"|..., "shape": [...], "data_offsets": [begin, end)}, offsets
// relative to byte 8 + N; an optional "__metadata__" maps strings to strings.
// Data is little-endian, C order (last dimension fastest), no strides.
//
// Open() validates every entry against the file size and its dtype/shape.
// Immutable afterwards; safe to read from many threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/mapped_file.h"
#include "common/status.h"

namespace ragd::retrieval {

struct SafeTensor {
  std::string name;
  std::string dtype;           // "F32", "F16", "BF16", "I64", ...
  std::vector<int64_t> shape;  // outermost first
  const uint8_t* data = nullptr;
  size_t n_bytes = 0;

  int64_t n_elements() const;
};

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> Open(const std::string& path);

  size_t file_size() const { return file_.size(); }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, SafeTensor>& tensors() const { return tensors_; }
  const SafeTensor* Find(const std::string& name) const;

 private:
  MappedFile file_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, SafeTensor> tensors_;
};

// Bytes per element of a safetensors dtype, 0 when unknown.
int SafetensorsDtypeSize(const std::string& dtype);

}  // namespace ragd::retrieval
