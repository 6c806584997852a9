#include "retrieval/bert.h"

#include <cblas.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "retrieval/safetensors.h"

namespace ragd::retrieval {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

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
      if (bf16) {
        uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(&out[i], &bits, 4);
      } else {
        out[i] = HalfToFloat(h);
      }
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
  if (bias == nullptr) return;
  const float* b = bias->data();
  for (int i = 0; i < t; ++i) {
    float* row = y + static_cast<size_t>(i) * n;
    for (int j = 0; j < n; ++j) row[j] += b[j];
  }
}

// x = LayerNorm(x + r + b_r) over rows of width n (r, b_r may be null).
void AddLayerNorm(float* x, const float* r, const float* r_bias, int t, int n, const std::vector<float>& g,
                  const std::vector<float>& b, float eps) {
  for (int i = 0; i < t; ++i) {
    float* row = x + static_cast<size_t>(i) * n;
    if (r != nullptr) {
      const float* rr = r + static_cast<size_t>(i) * n;
      for (int j = 0; j < n; ++j) row[j] += rr[j] + r_bias[j];
    }
    float sum = 0;
    for (int j = 0; j < n; ++j) sum += row[j];
    const float mean = sum / static_cast<float>(n);
    float var = 0;
    for (int j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<float>(n);
    const float inv = 1.f / std::sqrt(var + eps);
    for (int j = 0; j < n; ++j) row[j] = (row[j] - mean) * inv * g[j] + b[j];
  }
}

// exp(x) for x <= 0 by range reduction and a degree-6 polynomial (relative
// error ~2e-7), written so the compiler vectorizes the loops that call it.
inline float ExpNonPositive(float x) {
  x = std::max(x, -87.f);
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return p * scale;
}

// x = gelu(x + b) with the exact (erf) GELU; erf by Abramowitz & Stegun
// 7.1.26 (absolute error < 1.5e-7), far below float32 noise of the model.
void BiasGelu(float* x, int t, int n, const std::vector<float>& bias) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  const float* b = bias.data();
  for (int i = 0; i < t; ++i) {
    float* row = x + static_cast<size_t>(i) * n;
    for (int j = 0; j < n; ++j) {
      const float v = row[j] + b[j];
      const float z = v * kInvSqrt2;
      const float a = std::fabs(z);
      const float k = 1.f / (1.f + 0.3275911f * a);
      const float poly =
          ((((1.061405429f * k - 1.453152027f) * k + 1.421413741f) * k - 0.284496736f) * k + 0.254829592f) *
          k;
      const float erf_abs = 1.f - poly * ExpNonPositive(-a * a);
      const float erf = z < 0 ? -erf_abs : erf_abs;
      row[j] = 0.5f * v * (1.f + erf);
    }
  }
}

// Row-wise softmax of an n x m matrix, in place.
void Softmax(float* s, int n, int m) {
  for (int i = 0; i < n; ++i) {
    float* row = s + static_cast<size_t>(i) * m;
    float mx = row[0];
    for (int j = 1; j < m; ++j) mx = std::max(mx, row[j]);
    for (int j = 0; j < m; ++j) row[j] = ExpNonPositive(row[j] - mx);
    float sum = 0;
    for (int j = 0; j < m; ++j) sum += row[j];
    const float inv = 1.f / sum;
    for (int j = 0; j < m; ++j) row[j] *= inv;
  }
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

std::vector<float> BertModel::MeanPooled(const std::vector<std::vector<int32_t>>& batch,
                                         double* flops) const {
  const BertConfig& c = config_;
  const int h = c.hidden, inter = c.intermediate, dh = c.hidden / c.heads;
  // Sequences are packed back to back without padding: every step but
  // attention works per token, and attention runs per sequence over its own
  // tokens, which is what masking the padded keys computes.
  std::vector<int> start, len;
  int t = 0;
  for (const auto& seq : batch) {
    const int n = static_cast<int>(std::min<size_t>(seq.size(), static_cast<size_t>(c.max_positions)));
    start.push_back(t);
    len.push_back(n);
    t += n;
  }
  std::vector<float> pooled(batch.size() * static_cast<size_t>(h), 0.f);
  if (t == 0) return pooled;

  std::vector<float> x(static_cast<size_t>(t) * h), qkv(static_cast<size_t>(t) * 3 * h),
      ctx(static_cast<size_t>(t) * h), tmp(static_cast<size_t>(t) * h), up(static_cast<size_t>(t) * inter);
  for (size_t s = 0; s < batch.size(); ++s) {
    for (int i = 0; i < len[s]; ++i) {
      int32_t id = batch[s][static_cast<size_t>(i)];
      if (id < 0 || id >= c.vocab_size) id = 0;
      float* row = x.data() + static_cast<size_t>(start[s] + i) * h;
      const float* we = word_emb_.data() + static_cast<size_t>(id) * h;
      const float* pe = pos_emb_.data() + static_cast<size_t>(i) * h;
      for (int j = 0; j < h; ++j) row[j] = we[j] + pe[j] + type_emb_[static_cast<size_t>(j)];
    }
  }
  AddLayerNorm(x.data(), nullptr, nullptr, t, h, emb_ln_g_, emb_ln_b_, c.eps);

  double mads = 0;
  const float scale = 1.f / std::sqrt(static_cast<float>(dh));
  std::vector<float> scores;
  for (const Layer& L : layers_) {
    Linear(x.data(), t, h, L.qkv_w, &L.qkv_b, 3 * h, qkv.data());
    for (size_t s = 0; s < batch.size(); ++s) {
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
        Softmax(scores.data(), n, n);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dh, n, 1.f, scores.data(), n, v, 3 * h, 0.f,
                    ctx.data() + static_cast<size_t>(start[s]) * h + head * dh, h);
      }
      mads += 2.0 * n * n * h;
    }
    Linear(ctx.data(), t, h, L.out_w, nullptr, h, tmp.data());
    AddLayerNorm(x.data(), tmp.data(), L.out_b.data(), t, h, L.ln1_g, L.ln1_b, c.eps);
    Linear(x.data(), t, h, L.ffn_up_w, nullptr, inter, up.data());
    BiasGelu(up.data(), t, inter, L.ffn_up_b);
    Linear(up.data(), t, inter, L.ffn_down_w, nullptr, h, tmp.data());
    AddLayerNorm(x.data(), tmp.data(), L.ffn_down_b.data(), t, h, L.ln2_g, L.ln2_b, c.eps);
    mads += static_cast<double>(t) * (4.0 * h * h + 2.0 * h * inter);
  }
  if (flops != nullptr) *flops += 2.0 * mads;

  for (size_t s = 0; s < batch.size(); ++s) {
    float* out = pooled.data() + s * h;
    for (int i = 0; i < len[s]; ++i) {
      const float* row = x.data() + static_cast<size_t>(start[s] + i) * h;
      for (int j = 0; j < h; ++j) out[j] += row[j];
    }
    const float inv = 1.f / std::max(len[s], 1);
    for (int j = 0; j < h; ++j) out[j] *= inv;
  }
  return pooled;
}

}  // namespace ragd::retrieval
