#include "retrieval/embedder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

namespace ragd::retrieval {
namespace {

// Parses an optional JSON file; a missing file gives an empty object.
Result<nlohmann::json> OptionalJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corrupt(path + " is not a JSON object");
  return j;
}

}  // namespace

Result<std::unique_ptr<Embedder>> Embedder::Load(const std::string& dir, const EmbedderOptions& options) {
  auto tok_config = OptionalJson(dir + "/tokenizer_config.json");
  if (!tok_config.ok()) return tok_config.status();
  auto st_config = OptionalJson(dir + "/sentence_bert_config.json");
  if (!st_config.ok()) return st_config.status();
  auto pool_config = OptionalJson(dir + "/1_Pooling/config.json");
  if (!pool_config.ok()) return pool_config.status();
  if (auto it = pool_config->find("pooling_mode_mean_tokens"); it != pool_config->end() && *it != true) {
    return Status::Unsupported(dir + ": only mean pooling is supported");
  }

  WordPieceOptions wp;
  if (auto it = tok_config->find("do_lower_case"); it != tok_config->end() && it->is_boolean())
    wp.lowercase = *it;
  if (auto it = tok_config->find("tokenize_chinese_chars"); it != tok_config->end() && it->is_boolean()) {
    wp.split_cjk = *it;
  }
  auto tokenizer = WordPieceTokenizer::Load(dir + "/vocab.txt", wp);
  if (!tokenizer.ok()) return tokenizer.status();
  auto model = BertModel::Load(dir);
  if (!model.ok()) return model.status();
  if (tokenizer->vocab_size() > static_cast<size_t>(model->config().vocab_size)) {
    return Status::Corrupt(dir + ": vocab.txt is larger than the model's vocabulary");
  }

  std::unique_ptr<Embedder> e(new Embedder(std::move(*tokenizer), std::move(*model)));
  e->options_ = options;
  if (options.threads > 0) BertModel::SingleThreadedProducts();
  size_t max_tokens = options.max_tokens;
  if (max_tokens == 0) {
    max_tokens = 256;
    if (auto it = st_config->find("max_seq_length"); it != st_config->end() && it->is_number_unsigned()) {
      max_tokens = it->get<size_t>();
    }
  }
  e->max_tokens_ = std::clamp<size_t>(max_tokens, 2, static_cast<size_t>(e->model_.config().max_positions));
  e->name_ = std::filesystem::path(dir).lexically_normal().filename().string();
  if (e->name_.empty())
    e->name_ = std::filesystem::path(dir).lexically_normal().parent_path().filename().string();
  return e;
}

Result<std::vector<std::vector<float>>> Embedder::Embed(const std::vector<std::string>& texts,
                                                        EmbedStats* stats) const {
  std::vector<std::vector<int32_t>> ids(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) ids[i] = Encode(texts[i]);
  // Longest first, so each batch holds texts of similar length.
  std::vector<size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });

  const int dim = dimension();
  std::vector<std::vector<float>> out(texts.size());
  EmbedStats local;
  size_t next = 0;
  while (next < order.size()) {
    std::vector<std::vector<int32_t>> batch;
    std::vector<size_t> which;
    size_t tokens = 0;
    while (next < order.size() &&
           (batch.empty() || tokens + ids[order[next]].size() <= options_.batch_tokens)) {
      tokens += ids[order[next]].size();
      which.push_back(order[next]);
      batch.push_back(std::move(ids[order[next]]));
      ++next;
    }
    std::vector<float> pooled;
    {
      std::lock_guard<std::mutex> lock(forward_mutex_);
      pooled = model_.MeanPooled(batch, &local.flops, options_.threads);
    }
    local.tokens += tokens;
    for (size_t b = 0; b < which.size(); ++b) {
      std::vector<float> v(pooled.begin() + static_cast<ptrdiff_t>(b * dim),
                           pooled.begin() + static_cast<ptrdiff_t>((b + 1) * dim));
      if (options_.normalize) {
        double norm = 0;
        for (float f : v) norm += static_cast<double>(f) * f;
        const float inv = static_cast<float>(1.0 / std::max(std::sqrt(norm), 1e-12));
        for (float& f : v) f *= inv;
      }
      out[which[b]] = std::move(v);
    }
  }
  if (stats != nullptr) *stats = local;
  return out;
}

Result<std::vector<float>> Embedder::EmbedOne(std::string_view text) const {
  auto r = Embed({std::string(text)});
  if (!r.ok()) return r.status();
  return std::move(r->front());
}

}  // namespace ragd::retrieval
