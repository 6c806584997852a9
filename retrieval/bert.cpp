#include "retrieval/bert.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <numeric>
#include <system_error>
#include <thread>

#include "common/half.h"
#include "retrieval/bert_kernels.h"
#include "retrieval/safetensors.h"

namespace ragd::retrieval {
namespace {

// Copies tensor `name` (or "bert." + name) as float32, checking its shape.
Status ReadTensor(const SafetensorsFile& file, const std::string& name, std::vector<int64_t> shape,
                  std::vector<float>& out) {
  const SafeTensor* t = file.Find(name);
  if (t == nullptr) t = file.Find("bert." + name);
  if (t == nullptr) return Status::Corrupt("model.safetensors lacks tensor " + name);
  if (t->shape != shape) return Status::Corrupt("tensor " + name + " has an unexpected shape");
  const size_t n = static_cast<size_t>(t->n_elements());
  out.resize(n);
  if (t->dtype == "F32") {
    std::memcpy(out.data(), t->data, n * 4);
  } else if (t->dtype == "F16" || t->dtype == "BF16") {
    const bool bf16 = t->dtype == "BF16";
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t->data + 2 * i, 2);
      out[i] = bf16 ? Bf16ToFloat(h) : HalfToFloat(h);
    }
  } else {
    return Status::Unsupported("tensor " + name + " has dtype " + t->dtype);
  }
  return Status::Ok();
}

Result<BertConfig> ReadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot open " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corrupt(path + " is not a JSON object");
  BertConfig c;
  auto get_int = [&](const char* key, int& out, int fallback) -> Status {
    auto it = j.find(key);
    if (it == j.end()) {
      if (fallback < 0) return Status::Corrupt(path + " lacks " + key);
      out = fallback;
      return Status::Ok();
    }
    if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > (1 << 24)) {
      return Status::Corrupt(path + ": bad " + key);
    }
    out = it->get<int>();
    return Status::Ok();
  };
  RAGD_RETURN_IF_ERROR(get_int("num_hidden_layers", c.n_layers, -1));
  RAGD_RETURN_IF_ERROR(get_int("hidden_size", c.hidden, -1));
  RAGD_RETURN_IF_ERROR(get_int("num_attention_heads", c.heads, -1));
  RAGD_RETURN_IF_ERROR(get_int("intermediate_size", c.intermediate, -1));
  RAGD_RETURN_IF_ERROR(get_int("max_position_embeddings", c.max_positions, 512));
  RAGD_RETURN_IF_ERROR(get_int("vocab_size", c.vocab_size, -1));
  RAGD_RETURN_IF_ERROR(get_int("type_vocab_size", c.type_vocab_size, 2));
  if (auto it = j.find("layer_norm_eps"); it != j.end() && it->is_number()) c.eps = it->get<float>();
  if (c.hidden % c.heads != 0) return Status::Corrupt(path + ": hidden_size not a multiple of the heads");
  if (auto it = j.find("hidden_act"); it != j.end() && *it != "gelu") {
    return Status::Unsupported(path + ": hidden_act must be \"gelu\"");
  }
  if (auto it = j.find("position_embedding_type"); it != j.end() && *it != "absolute") {
    return Status::Unsupported(path + ": only absolute position embeddings are supported");
  }
  return c;
}

// y[T, N] = x[T, K] * w[N, K]^T + b (b == nullptr: no bias)
void Linear(const float* x, int t, int k, const std::vector<float>& w, const std::vector<float>* bias, int n,
            float* y) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, n, k, 1.f, x, k, w.data(), k, 0.f, y, n);
  if (bias != nullptr) kernels::AddBias(y, t, n, bias->data());
}

// A batch is split over threads only when each part gets at least this many
// tokens: below it, starting threads costs more than OpenBLAS's own threading
// of the (small) products.
constexpr int kMinTokensPerThread = 128;

// OpenBLAS's thread count is process-wide. A split forward pass sets it to 1
// while its threads run (each thread multiplies its own sequences) and then
// restores it; this lock keeps two split passes from interleaving that.
std::mutex& BlasThreadsMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

Result<BertModel> BertModel::Load(const std::string& dir) {
  auto config = ReadConfig(dir + "/config.json");
  if (!config.ok()) return config.status();
  auto file = SafetensorsFile::Open(dir + "/model.safetensors");
  if (!file.ok()) return file.status();
  BertModel m;
  m.config_ = *config;
  const BertConfig& c = m.config_;
  const int64_t h = c.hidden, inter = c.intermediate;
  RAGD_RETURN_IF_ERROR(
      ReadTensor(*file, "embeddings.word_embeddings.weight", {c.vocab_size, h}, m.word_emb_));
  RAGD_RETURN_IF_ERROR(
      ReadTensor(*file, "embeddings.position_embeddings.weight", {c.max_positions, h}, m.pos_emb_));
  RAGD_RETURN_IF_ERROR(
      ReadTensor(*file, "embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}, m.type_emb_));
  RAGD_RETURN_IF_ERROR(ReadTensor(*file, "embeddings.LayerNorm.weight", {h}, m.emb_ln_g_));
  RAGD_RETURN_IF_ERROR(ReadTensor(*file, "embeddings.LayerNorm.bias", {h}, m.emb_ln_b_));
  m.layers_.resize(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) {
    Layer& L = m.layers_[static_cast<size_t>(l)];
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    std::vector<float> w, b;
    for (const char* part : {"query", "key", "value"}) {
      RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.self." + part + ".weight", {h, h}, w));
      RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.self." + part + ".bias", {h}, b));
      L.qkv_w.insert(L.qkv_w.end(), w.begin(), w.end());
      L.qkv_b.insert(L.qkv_b.end(), b.begin(), b.end());
    }
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.output.dense.weight", {h, h}, L.out_w));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.output.dense.bias", {h}, L.out_b));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.output.LayerNorm.weight", {h}, L.ln1_g));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "attention.output.LayerNorm.bias", {h}, L.ln1_b));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "intermediate.dense.weight", {inter, h}, L.ffn_up_w));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "intermediate.dense.bias", {inter}, L.ffn_up_b));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "output.dense.weight", {h, inter}, L.ffn_down_w));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "output.dense.bias", {h}, L.ffn_down_b));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "output.LayerNorm.weight", {h}, L.ln2_g));
    RAGD_RETURN_IF_ERROR(ReadTensor(*file, p + "output.LayerNorm.bias", {h}, L.ln2_b));
  }
  return m;
}

double BertModel::Forward(const std::vector<std::vector<int32_t>>& batch, const std::vector<size_t>& which,
                          float* pooled) const {
  const BertConfig& c = config_;
  const int h = c.hidden, inter = c.intermediate, dh = c.hidden / c.heads;
  // Sequences are packed back to back without padding: every step but
  // attention works per token, and attention runs per sequence over its own
  // tokens, which is what masking the padded keys computes.
  std::vector<int> start, len;
  int t = 0;
  for (size_t s : which) {
    const int n = static_cast<int>(std::min<size_t>(batch[s].size(), static_cast<size_t>(c.max_positions)));
    start.push_back(t);
    len.push_back(n);
    t += n;
  }
  if (t == 0) return 0;

  std::vector<float> x(static_cast<size_t>(t) * h), qkv(static_cast<size_t>(t) * 3 * h),
      ctx(static_cast<size_t>(t) * h), tmp(static_cast<size_t>(t) * h), up(static_cast<size_t>(t) * inter);
  for (size_t s = 0; s < which.size(); ++s) {
    const std::vector<int32_t>& ids = batch[which[s]];
    for (int i = 0; i < len[s]; ++i) {
      int32_t id = ids[static_cast<size_t>(i)];
      if (id < 0 || id >= c.vocab_size) id = 0;
      float* row = x.data() + static_cast<size_t>(start[s] + i) * h;
      const float* we = word_emb_.data() + static_cast<size_t>(id) * h;
      const float* pe = pos_emb_.data() + static_cast<size_t>(i) * h;
      for (int j = 0; j < h; ++j) row[j] = we[j] + pe[j] + type_emb_[static_cast<size_t>(j)];
    }
  }
  kernels::AddLayerNorm(x.data(), nullptr, nullptr, t, h, emb_ln_g_.data(), emb_ln_b_.data(), c.eps);

  double mads = 0;
  const float scale = 1.f / std::sqrt(static_cast<float>(dh));
  std::vector<float> scores;
  for (const Layer& L : layers_) {
    Linear(x.data(), t, h, L.qkv_w, &L.qkv_b, 3 * h, qkv.data());
    for (size_t s = 0; s < which.size(); ++s) {
      const int n = len[s];
      if (n == 0) continue;
      scores.resize(static_cast<size_t>(n) * n);
      const float* base = qkv.data() + static_cast<size_t>(start[s]) * 3 * h;
      for (int head = 0; head < c.heads; ++head) {
        const float* q = base + head * dh;
        const float* k = base + h + head * dh;
        const float* v = base + 2 * h + head * dh;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, dh, scale, q, 3 * h, k, 3 * h, 0.f,
                    scores.data(), n);
        kernels::Softmax(scores.data(), n, n);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dh, n, 1.f, scores.data(), n, v, 3 * h, 0.f,
                    ctx.data() + static_cast<size_t>(start[s]) * h + head * dh, h);
      }
      mads += 2.0 * n * n * h;
    }
    Linear(ctx.data(), t, h, L.out_w, nullptr, h, tmp.data());
    kernels::AddLayerNorm(x.data(), tmp.data(), L.out_b.data(), t, h, L.ln1_g.data(), L.ln1_b.data(), c.eps);
    Linear(x.data(), t, h, L.ffn_up_w, nullptr, inter, up.data());
    kernels::BiasGelu(up.data(), t, inter, L.ffn_up_b.data());
    Linear(up.data(), t, inter, L.ffn_down_w, nullptr, h, tmp.data());
    kernels::AddLayerNorm(x.data(), tmp.data(), L.ffn_down_b.data(), t, h, L.ln2_g.data(), L.ln2_b.data(),
                          c.eps);
    mads += static_cast<double>(t) * (4.0 * h * h + 2.0 * h * inter);
  }

  for (size_t s = 0; s < which.size(); ++s) {
    float* out = pooled + which[s] * h;
    for (int i = 0; i < len[s]; ++i) {
      const float* row = x.data() + static_cast<size_t>(start[s] + i) * h;
      for (int j = 0; j < h; ++j) out[j] += row[j];
    }
    const float inv = 1.f / std::max(len[s], 1);
    for (int j = 0; j < h; ++j) out[j] *= inv;
  }
  return 2.0 * mads;
}

void BertModel::SingleThreadedProducts() { openblas_set_num_threads(1); }

std::vector<float> BertModel::MeanPooled(const std::vector<std::vector<int32_t>>& batch, double* flops,
                                         int split_threads) const {
  const BertConfig& c = config_;
  const int h = c.hidden;
  std::vector<float> pooled(batch.size() * static_cast<size_t>(h), 0.f);
  // Cost of each sequence in multiply-adds, to balance the parts.
  std::vector<double> cost(batch.size());
  double total_tokens = 0;
  for (size_t s = 0; s < batch.size(); ++s) {
    const double n =
        static_cast<double>(std::min<size_t>(batch[s].size(), static_cast<size_t>(c.max_positions)));
    cost[s] = n * (4.0 * h * h + 2.0 * h * c.intermediate) + 2.0 * n * n * h;
    total_tokens += n;
  }

  std::unique_lock<std::mutex> blas_lock(BlasThreadsMutex(), std::defer_lock);
  int blas_threads = 1, parts = 1;
  if (batch.size() >= 2 && total_tokens >= 2 * kMinTokensPerThread) {
    blas_lock.lock();
    blas_threads = openblas_get_num_threads();
    parts = std::min({split_threads > 0 ? split_threads : blas_threads, static_cast<int>(batch.size()),
                      static_cast<int>(total_tokens / kMinTokensPerThread)});
  }
  std::vector<std::vector<size_t>> which(static_cast<size_t>(std::max(parts, 1)));
  if (parts <= 1) {
    if (blas_lock.owns_lock()) blas_lock.unlock();
    which[0].resize(batch.size());
    std::iota(which[0].begin(), which[0].end(), 0);
    const double f = Forward(batch, which[0], pooled.data());
    if (flops != nullptr) *flops += f;
    return pooled;
  }

  // Longest processing time first: each sequence, costliest first, goes to the
  // part with the least work so far.
  std::vector<size_t> order(batch.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(which.size(), 0.0);
  for (size_t s : order) {
    const size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    which[p].push_back(s);
    load[p] += cost[s];
  }

  std::vector<double> part_flops(which.size(), 0.0);
  std::atomic<bool> out_of_memory{false};
  auto run_part = [&](size_t p) {
    try {
      part_flops[p] = Forward(batch, which[p], pooled.data());
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  };
  openblas_set_num_threads(1);
  {
    std::vector<std::thread> workers;
    for (size_t p = 1; p < which.size(); ++p) {
      try {
        workers.emplace_back(run_part, p);
      } catch (const std::system_error&) {  // no thread to be had: do the part here
        run_part(p);
      }
    }
    run_part(0);
    for (std::thread& w : workers) w.join();
  }
  openblas_set_num_threads(blas_threads);
  if (out_of_memory) throw std::bad_alloc();  // as the single-part path would
  if (flops != nullptr) *flops += std::accumulate(part_flops.begin(), part_flops.end(), 0.0);
  return pooled;
}

}  // namespace ragd::retrieval
