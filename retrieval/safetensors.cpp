#include "retrieval/safetensors.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace ragd::retrieval {

int SafetensorsDtypeSize(const std::string& dtype) {
  static const std::map<std::string, int> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

int64_t SafeTensor::n_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const SafeTensor* SafetensorsFile::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  SafetensorsFile f;
  f.file_ = std::move(mapped).value();
  const auto corrupt = [&](const std::string& what) { return Status::Corrupt(path + ": " + what); };

  uint64_t header_len = 0;
  if (f.file_.size() < 8) return corrupt("file too short for a safetensors header");
  std::memcpy(&header_len, f.file_.data(), 8);
  if (header_len < 2 || header_len > f.file_.size() - 8 || header_len > (uint64_t{100} << 20))
    return corrupt("header length " + std::to_string(header_len) + " does not fit the file");
  const char* hdr = reinterpret_cast<const char*>(f.file_.data() + 8);
  nlohmann::json j = nlohmann::json::parse(hdr, hdr + header_len, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corrupt("header is not a JSON object");

  const uint8_t* data = f.file_.data() + 8 + header_len;
  const uint64_t data_size = f.file_.size() - 8 - header_len;
  for (auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return corrupt("__metadata__ is not an object");
      for (auto& [k, v] : entry.items())
        if (v.is_string()) f.metadata_[k] = v.get<std::string>();
      continue;
    }
    // A named copy: clang before 16 cannot capture a structured binding.
    const std::string& tensor = name;
    const auto bad = [&](const std::string& what) { return corrupt("tensor '" + tensor + "': " + what); };
    if (!entry.is_object()) return bad("entry is not an object");
    auto dtype = entry.find("dtype");
    auto shape = entry.find("shape");
    auto offs = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string()) return bad("missing dtype");
    if (shape == entry.end() || !shape->is_array()) return bad("missing shape");
    if (offs == entry.end() || !offs->is_array() || offs->size() != 2 || !(*offs)[0].is_number_unsigned() ||
        !(*offs)[1].is_number_unsigned())
      return bad("missing data_offsets");
    SafeTensor t;
    t.name = name;
    t.dtype = dtype->get<std::string>();
    const int esize = SafetensorsDtypeSize(t.dtype);
    if (esize == 0) return bad("unknown dtype " + t.dtype);
    uint64_t n = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40)) return bad("bad shape");
      const uint64_t dim = d.get<uint64_t>();
      // Checked before multiplying: two dimensions of 2^32 wrap to 0 in 64 bits.
      if (dim != 0 && n > (uint64_t{1} << 40) / dim) return bad("bad shape");
      t.shape.push_back(static_cast<int64_t>(dim));
      n *= dim;
    }
    const uint64_t begin = (*offs)[0].get<uint64_t>(), end = (*offs)[1].get<uint64_t>();
    if (begin > end || end > data_size) return bad("data extends past the end of the file");
    if (end - begin != n * esize) return bad("data size does not match dtype and shape");
    t.data = data + begin;
    t.n_bytes = end - begin;
    f.tensors_.emplace(name, std::move(t));
  }
  return f;
}

}  // namespace ragd::retrieval
