#include "inference/models/model.h"

#include <algorithm>

#include "inference/models/architectures.h"

namespace ragd::inference {

int64_t KvCache::SlotsFor(const ModelConfig& config, int layer, int64_t capacity, int64_t spare) {
  int64_t slots = capacity;
  if (config.layer_sliding[layer] && config.sliding_window > 0) {
    slots = std::min(capacity, config.sliding_window + std::max<int64_t>(spare, 0));
  }
  return std::max<int64_t>(slots, 1);
}

size_t KvCache::RowBytes(const ModelConfig& config) {
  return config.n_head_kv * config.head_dim * (config.f16_attention ? sizeof(uint16_t) : sizeof(float));
}

size_t KvCache::BytesFor(const ModelConfig& config, int64_t capacity, int64_t spare) {
  size_t total = 0;
  for (int l = 0; l < static_cast<int>(config.n_layer); ++l)
    total += 2 * SlotsFor(config, l, capacity, spare) * RowBytes(config);
  return total;
}

KvCache::KvCache(const ModelConfig& config, int64_t capacity, int64_t spare)
    : capacity_(capacity), row_width_(config.n_head_kv * config.head_dim), half_(config.f16_attention) {
  layers_.resize(config.n_layer);
  for (int l = 0; l < static_cast<int>(config.n_layer); ++l) {
    Layer& layer = layers_[l];
    layer.slots = SlotsFor(config, l, capacity, spare);
    if (half_) {
      layer.k16.assign(layer.slots * row_width_, 0);
      layer.v16.assign(layer.slots * row_width_, 0);
    } else {
      layer.k.assign(layer.slots * row_width_, 0.f);
      layer.v.assign(layer.slots * row_width_, 0.f);
    }
  }
}

size_t KvCache::bytes() const {
  size_t total = 0;
  for (const Layer& l : layers_)
    total += (l.k.size() + l.v.size()) * sizeof(float) + (l.k16.size() + l.v16.size()) * sizeof(uint16_t);
  return total;
}

Result<std::unique_ptr<Model>> LoadModel(const GgufFile& file, const ModelOptions& options) {
  const std::string arch = file.architecture();
  if (arch == "gemma3") return LoadGemma3(file, options);
  if (arch == "llama") return LoadLlama(file, options);
  if (arch == "qwen2") return LoadQwen2(file, options);
  if (arch == "qwen3") return LoadQwen3(file, options);
  if (arch.empty()) return Status::Corrupt("model file has no general.architecture");
  return Status::Unsupported("model architecture '" + arch +
                             "' is not supported (supported: gemma3, llama, qwen2, qwen3)");
}

}  // namespace ragd::inference
