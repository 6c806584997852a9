#include "inference/models/tensor_check.h"

#include <string>

#include "inference/gguf_names.h"

namespace ragd::inference {
namespace {

std::string Shape(const GgufTensor& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.n_dims; ++i) {
    if (i) s += ", ";
    s += std::to_string(t.ne[i]);
  }
  return s + "]";
}

Result<const GgufTensor*> Find(const GgufFile& file, const std::string& name) {
  const GgufTensor* t = file.FindTensor(name);
  if (t == nullptr) return Status::Corrupt("model tensor '" + name + "' is missing");
  return t;
}

}  // namespace

Result<WeightView> RequireMatrix(const GgufFile& file, const std::string& name, int64_t n_in, int64_t n_out) {
  auto found = Find(file, name);
  if (!found.ok()) return found.status();
  const GgufTensor& t = **found;
  if (t.n_dims != 2 || t.ne[0] != static_cast<uint64_t>(n_in) || t.ne[1] != static_cast<uint64_t>(n_out)) {
    return Status::Corrupt("model tensor '" + name + "' has shape " + Shape(t) + ", expected [" +
                           std::to_string(n_in) + ", " + std::to_string(n_out) + "]");
  }
  if (t.info == nullptr || !t.info->supported) {
    return Status::Unsupported("model tensor '" + name + "' has unsupported type " +
                               std::string(t.info ? t.info->name : "unknown"));
  }
  WeightView w;
  w.type = t.type;
  w.data = t.data;
  w.n_in = n_in;
  w.n_out = n_out;
  w.row_bytes = t.row_bytes();
  return w;
}

Result<const float*> RequireVector(const GgufFile& file, const std::string& name, int64_t n) {
  auto found = Find(file, name);
  if (!found.ok()) return found.status();
  const GgufTensor& t = **found;
  if (t.n_dims != 1 || t.ne[0] != static_cast<uint64_t>(n)) {
    return Status::Corrupt("model tensor '" + name + "' has shape " + Shape(t) + ", expected [" +
                           std::to_string(n) + "]");
  }
  if (t.type != GgmlType::kF32) {
    return Status::Unsupported("model tensor '" + name + "' has type " + std::string(t.info->name) +
                               ", expected F32");
  }
  if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0) {
    return Status::Corrupt("model tensor '" + name + "' is not 4-byte aligned");
  }
  return reinterpret_cast<const float*>(t.data);
}

Result<int64_t> RequireInt(const GgufFile& file, const std::string& key, int64_t min, int64_t max) {
  auto v = file.GetInt(key);
  if (!v) return Status::Corrupt("model metadata key '" + key + "' is missing or not an integer");
  if (*v < min || *v > max) {
    return Status::Corrupt("model metadata key '" + key + "' = " + std::to_string(*v) + " is out of range [" +
                           std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return *v;
}

Result<double> RequireFloat(const GgufFile& file, const std::string& key) {
  auto v = file.GetFloat(key);
  if (!v) return Status::Corrupt("model metadata key '" + key + "' is missing or not a number");
  return *v;
}

Status LayerTensors::Matrix(std::string_view suffix, int64_t n_in, int64_t n_out, WeightView* out) const {
  auto w = RequireMatrix(file_, LayerTensor(layer_, suffix), n_in, n_out);
  if (!w.ok()) return w.status();
  *out = *w;
  return Status::Ok();
}

Status LayerTensors::Vector(std::string_view suffix, int64_t n, const float** out) const {
  auto w = RequireVector(file_, LayerTensor(layer_, suffix), n);
  if (!w.ok()) return w.status();
  *out = *w;
  return Status::Ok();
}

Status LayerTensors::OptionalVector(std::string_view suffix, int64_t n, const float** out) const {
  *out = nullptr;
  return Has(suffix) ? Vector(suffix, n, out) : Status::Ok();
}

bool LayerTensors::Has(std::string_view suffix) const {
  return file_.FindTensor(LayerTensor(layer_, suffix)) != nullptr;
}

}  // namespace ragd::inference
