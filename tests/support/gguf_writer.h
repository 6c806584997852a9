// Writes small GGUF files for tests: metadata of any type and tensors with
// caller-provided raw bytes. Header-only; used by tests that build tiny
// fixture models (the layout is described in inference/gguf.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace ragd::testing {

class GgufWriter {
 public:
  void AddString(const std::string& key, const std::string& value) {
    Key(key, 8);
    Str(kv_, value);
  }
  void AddU32(const std::string& key, uint32_t v) { Key(key, 4), Pod(kv_, v); }
  void AddI32(const std::string& key, int32_t v) { Key(key, 5), Pod(kv_, v); }
  void AddF32(const std::string& key, float v) { Key(key, 6), Pod(kv_, v); }
  void AddBool(const std::string& key, bool v) { Key(key, 7), Pod(kv_, static_cast<uint8_t>(v)); }
  void AddStringArray(const std::string& key, const std::vector<std::string>& values) {
    Key(key, 9);
    Pod(kv_, uint32_t{8});
    Pod(kv_, static_cast<uint64_t>(values.size()));
    for (const auto& s : values) Str(kv_, s);
  }
  void AddF32Array(const std::string& key, const std::vector<float>& values) {
    Key(key, 9);
    Pod(kv_, uint32_t{6});
    Pod(kv_, static_cast<uint64_t>(values.size()));
    for (float f : values) Pod(kv_, f);
  }
  void AddI32Array(const std::string& key, const std::vector<int32_t>& values) {
    Key(key, 9);
    Pod(kv_, uint32_t{5});
    Pod(kv_, static_cast<uint64_t>(values.size()));
    for (int32_t v : values) Pod(kv_, v);
  }

  // `ne` fastest dimension first; `bytes` must already be in the type's layout.
  void AddTensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type,
                 const std::vector<uint8_t>& bytes) {
    Str(tensors_, name);
    Pod(tensors_, static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) Pod(tensors_, d);
    Pod(tensors_, type);
    while (data_.size() % kAlign != 0) data_.push_back(0);
    Pod(tensors_, static_cast<uint64_t>(data_.size()));
    data_.insert(data_.end(), bytes.begin(), bytes.end());
    ++n_tensors_;
  }
  void AddF32Tensor(const std::string& name, std::vector<uint64_t> ne, const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    AddTensor(name, std::move(ne), 0, bytes);
  }

  std::vector<uint8_t> Bytes() const {
    std::vector<uint8_t> out;
    Pod(out, uint32_t{0x46554747});
    Pod(out, uint32_t{3});
    Pod(out, n_tensors_);
    Pod(out, n_kv_);
    out.insert(out.end(), kv_.begin(), kv_.end());
    out.insert(out.end(), tensors_.begin(), tensors_.end());
    while (out.size() % kAlign != 0) out.push_back(0);
    out.insert(out.end(), data_.begin(), data_.end());
    return out;
  }

  void Write(const std::string& path) const {
    const auto b = Bytes();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  }

 private:
  static constexpr size_t kAlign = 32;
  template <typename T>
  static void Pod(std::vector<uint8_t>& out, T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  static void Str(std::vector<uint8_t>& out, const std::string& s) {
    Pod(out, static_cast<uint64_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  void Key(const std::string& key, uint32_t type) {
    Str(kv_, key);
    Pod(kv_, type);
    ++n_kv_;
  }

  std::vector<uint8_t> kv_, tensors_, data_;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
};

}  // namespace ragd::testing
