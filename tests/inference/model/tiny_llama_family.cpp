#include "tests/inference/model/tiny_llama_family.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "tests/inference/model/tiny_quant.h"
#include "tests/support/gguf_writer.h"

namespace ragd::testing {

namespace {

// A variant's seed from its name (FNV-1a), so that adding a variant leaves
// the others' files as they were.
uint32_t SeedFor(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

std::vector<TinyLlamaSpec> TinyLlamaVariants() {
  using W = TinyLlamaWeights;
  std::vector<TinyLlamaSpec> v;
  auto llama = [&](const std::string& name) -> TinyLlamaSpec& {
    TinyLlamaSpec& s = v.emplace_back();
    s.name = name;
    s.neox_rope = false;
    s.rope_dimension_count = true;
    s.seed = SeedFor(name);
    return s;
  };
  auto qwen = [&](const std::string& name, const std::string& arch) -> TinyLlamaSpec& {
    TinyLlamaSpec& s = v.emplace_back();
    s.name = name;
    s.arch = arch;
    s.rms_eps = 1e-6f;
    s.rope_base = 1e6f;
    s.qkv_bias = arch == "qwen2";
    s.qk_norm = arch == "qwen3";
    s.seed = SeedFor(name);
    return s;
  };
  llama("llama_f32");  // tied output, GQA 2:1
  {
    TinyLlamaSpec& s = llama("llama_scaled_bias");  // MQA, every optional llama piece
    s.n_head_kv = 1;
    s.rope_base = 500000.f;
    s.rope_freqs = true;
    s.rope_scaling_type = "linear";
    s.rope_scaling_factor = 4.f;
    s.qkv_bias = s.out_bias = true;
    s.tied_output = false;
  }
  {
    TinyLlamaSpec& s = llama("llama_mixed");
    s.weights = W::kMixed;
    s.rope_base = 500000.f;
    s.rope_freqs = true;
    s.tied_output = false;
  }
  qwen("qwen2_f32", "qwen2");  // tied output
  qwen("qwen2_f16", "qwen2").weights = W::kF16;
  {
    TinyLlamaSpec& s = qwen("qwen2_kquant", "qwen2");  // heads of 64, as Qwen2.5 0.5B
    s.weights = W::kKQuants;
    s.n_embd = 256;
    s.n_ff = 512;
    s.head_dim = 64;
    s.tied_output = false;
  }
  {
    TinyLlamaSpec& s = qwen("qwen3_f32", "qwen3");  // heads of 32 against n_embd / n_head = 16
    s.head_dim = 32;
    s.tied_output = false;
  }
  {
    TinyLlamaSpec& s = qwen("qwen3_mixed", "qwen3");
    s.weights = W::kMixed;
    s.head_dim = 32;
    s.n_head_kv = 1;
  }
  {
    TinyLlamaSpec& s = qwen("qwen3_kquant", "qwen3");  // heads of 128 against 64, as Qwen3
    s.weights = W::kKQuants;
    s.n_embd = 256;
    s.n_ff = 256;
    s.head_dim = 128;
    s.tied_output = false;
  }
  return v;
}

std::vector<TinyLlamaSpec> TinyLlamaEdgeVariants() {
  std::vector<TinyLlamaSpec> v(2);
  v[0].name = "llama_rope_factor_untyped";
  v[0].rope_scaling_factor = 4.f;
  v[1].name = "llama_ffn_bias";
  v[1].ffn_bias = true;
  for (TinyLlamaSpec& s : v) {
    s.neox_rope = false;
    s.rope_dimension_count = true;
    s.seed = SeedFor(s.name);
  }
  return v;
}

TinyLlamaSpec FindTinyLlamaVariant(const std::string& name) {
  for (const auto& list : {TinyLlamaVariants(), TinyLlamaEdgeVariants()}) {
    for (const TinyLlamaSpec& s : list) {
      if (s.name == name) return s;
    }
  }
  return {};
}

namespace {

// Uniform values from the generator's bits alone (no library distribution,
// no libm), so that the files are the same bytes on every platform.
class Uniform {
 public:
  explicit Uniform(uint32_t seed) : rng_(seed) {}
  // Mean 0, standard deviation `sd`.
  float Next(float sd) {
    const float u = static_cast<float>(rng_() >> 8) * (1.f / 16777216.f);  // [0, 1), exact
    return (2.f * u - 1.f) * (sd * 1.7320508f);
  }

 private:
  std::mt19937 rng_;
};

void AddVocabulary(GgufWriter& g) {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // unknown, control, control
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    pieces.push_back(hex);
    types.push_back(6);  // byte
  }
  while (pieces.size() < static_cast<size_t>(kTinyLlamaVocab)) {
    pieces.push_back("\xe2\x96\x81w" + std::to_string(pieces.size()));  // "▁w<id>"
    types.push_back(1);                                                 // normal
  }
  std::vector<float> scores(pieces.size(), 0.f);
  for (size_t i = 259; i < scores.size(); ++i) scores[i] = -static_cast<float>(i - 259);
  g.AddString("tokenizer.ggml.model", "llama");
  g.AddStringArray("tokenizer.ggml.tokens", pieces);
  g.AddF32Array("tokenizer.ggml.scores", scores);
  g.AddI32Array("tokenizer.ggml.token_type", types);
  g.AddU32("tokenizer.ggml.unknown_token_id", 0);
  g.AddU32("tokenizer.ggml.bos_token_id", 1);
  g.AddU32("tokenizer.ggml.eos_token_id", 2);
}

TinyType MatrixType(TinyLlamaWeights weights, const std::string& role) {
  switch (weights) {
    case TinyLlamaWeights::kF32:
      return kF32;
    case TinyLlamaWeights::kF16:
      return kF16;
    case TinyLlamaWeights::kKQuants:
      return role == "token_embd" || role == "v" || role == "down" || role == "output" ? kQ6_K : kQ4_K;
    case TinyLlamaWeights::kMixed:
      break;
  }
  if (role == "k" || role == "v" || role == "down") return kQ4_0;
  if (role == "o" || role == "up") return kQ5_0;
  return kQ8_0;  // token_embd, q, gate, output
}

}  // namespace

TinyLlamaModelWeights WriteTinyLlama(const TinyLlamaSpec& s, const std::string& path,
                                     const std::string& skip_tensor, const std::string& bad_shape_tensor) {
  Uniform rng(s.seed);
  GgufWriter g;
  const std::string a = s.arch + ".";
  g.AddString("general.architecture", s.arch);
  g.AddString("general.name", "tiny " + s.name);
  g.AddU32(a + "context_length", s.context_length);
  g.AddU32(a + "embedding_length", s.n_embd);
  g.AddU32(a + "block_count", s.n_layer);
  g.AddU32(a + "feed_forward_length", s.n_ff);
  g.AddU32(a + "attention.head_count", s.n_head);
  g.AddU32(a + "attention.head_count_kv", s.n_head_kv);
  if (s.head_dim * s.n_head != s.n_embd) {
    g.AddU32(a + "attention.key_length", s.head_dim);
    g.AddU32(a + "attention.value_length", s.head_dim);
  }
  g.AddF32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  g.AddF32(a + "rope.freq_base", s.rope_base);
  if (s.rope_dimension_count) g.AddU32(a + "rope.dimension_count", s.head_dim);
  if (!s.rope_scaling_type.empty()) g.AddString(a + "rope.scaling.type", s.rope_scaling_type);
  if (s.rope_scaling_factor != 0.f) g.AddF32(a + "rope.scaling.factor", s.rope_scaling_factor);
  AddVocabulary(g);

  TinyLlamaModelWeights w;
  // A matrix of n_out rows of n_in, or (n_out == 0) a vector of n_in values.
  auto put = [&](const std::string& name, std::vector<float> v, int n_in, int n_out, TinyType type) {
    const auto bytes = EncodeTensor(type, v);
    if (name != skip_tensor) {
      std::vector<uint64_t> ne = {static_cast<uint64_t>(n_in)};
      if (n_out > 0) ne.push_back(n_out);
      auto written = bytes;
      if (name == bad_shape_tensor) {  // one more row, or one more value
        ne.back() += 1;
        written.resize(bytes.size() + bytes.size() / (n_out > 0 ? n_out : n_in), 0);
      }
      g.AddTensor(name, ne, type, written);
    }
    w.t[name] = DecodeTensor(type, bytes, v.size());
  };
  auto matrix = [&](const std::string& name, const std::string& role, int n_in, int n_out) {
    std::vector<float> v(static_cast<size_t>(n_in) * n_out);
    const float sd = role == "token_embd" ? 1.f : 1.f / std::sqrt(static_cast<float>(n_in));
    for (float& f : v) f = rng.Next(sd);
    put(name, std::move(v), n_in, n_out, MatrixType(s.weights, role));
  };
  auto vector = [&](const std::string& name, int n, float mean, float sd) {
    std::vector<float> v(n);
    for (float& f : v) f = mean + rng.Next(sd);
    put(name, std::move(v), n, 0, kF32);
  };

  const int e = s.n_embd, hd = s.head_dim, qw = s.n_head * hd, kvw = s.n_head_kv * hd;
  matrix("token_embd.weight", "token_embd", e, kTinyLlamaVocab);
  vector("output_norm.weight", e, 1.f, 0.2f);
  if (!s.tied_output) matrix("output.weight", "output", e, kTinyLlamaVocab);
  if (s.rope_freqs) {  // Llama 3's shape: 1 for the fast pairs rising to 8 for the slow ones
    std::vector<float> f(hd / 2);
    for (int i = 0; i < hd / 2; ++i)
      f[i] = 1.f + 7.f * static_cast<float>(i) / static_cast<float>(hd / 2 - 1);
    put("rope_freqs.weight", f, hd / 2, 0, kF32);
  }
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    vector(p + "attn_norm.weight", e, 1.f, 0.2f);
    matrix(p + "attn_q.weight", "q", e, qw);
    matrix(p + "attn_k.weight", "k", e, kvw);
    matrix(p + "attn_v.weight", "v", e, kvw);
    if (s.qkv_bias) {
      vector(p + "attn_q.bias", qw, 0.f, 0.3f);
      vector(p + "attn_k.bias", kvw, 0.f, 0.3f);
      vector(p + "attn_v.bias", kvw, 0.f, 0.3f);
    }
    matrix(p + "attn_output.weight", "o", qw, e);
    if (s.out_bias) vector(p + "attn_output.bias", e, 0.f, 0.3f);
    if (s.qk_norm) {
      vector(p + "attn_q_norm.weight", hd, 1.f, 0.2f);
      vector(p + "attn_k_norm.weight", hd, 1.f, 0.2f);
    }
    vector(p + "ffn_norm.weight", e, 1.f, 0.2f);
    matrix(p + "ffn_gate.weight", "gate", e, s.n_ff);
    matrix(p + "ffn_up.weight", "up", e, s.n_ff);
    matrix(p + "ffn_down.weight", "down", s.n_ff, e);
    if (s.ffn_bias) {
      vector(p + "ffn_gate.bias", s.n_ff, 0.f, 0.3f);
      vector(p + "ffn_up.bias", s.n_ff, 0.f, 0.3f);
      vector(p + "ffn_down.bias", e, 0.f, 0.3f);
    }
  }
  g.Write(path);
  return w;
}

namespace {

using Vec = std::vector<double>;

// RMS norm of n values from x[off], times the weight.
Vec RmsNorm(const Vec& x, size_t off, size_t n, const std::vector<float>& weight, double eps) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / n + eps);
  Vec out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[off + i] * inv * weight[i];
  return out;
}

// W x (+ b), W row-major [n_out][x.size()].
Vec Linear(const std::vector<float>& w, const Vec& x, const std::vector<float>* b) {
  const size_t n_in = x.size(), n_out = w.size() / n_in;
  Vec y(n_out);
  for (size_t o = 0; o < n_out; ++o) {
    double acc = b != nullptr ? (*b)[o] : 0.0;
    for (size_t i = 0; i < n_in; ++i) acc += static_cast<double>(w[o * n_in + i]) * x[i];
    y[o] = acc;
  }
  return y;
}

}  // namespace

std::vector<std::vector<double>> TinyLlamaReference(const TinyLlamaSpec& s, const TinyLlamaModelWeights& w,
                                                    const std::vector<int32_t>& tokens) {
  const int n = static_cast<int>(tokens.size()), e = s.n_embd, hd = s.head_dim, half = hd / 2;
  const int group = s.n_head / s.n_head_kv;
  auto W = [&](const std::string& name) -> const std::vector<float>& { return w.t.at(name); };
  auto Opt = [&](const std::string& name) -> const std::vector<float>* {
    auto it = w.t.find(name);
    return it == w.t.end() ? nullptr : &it->second;
  };
  // llama.cpp: without rope.scaling.type the type is "linear", and the
  // factor scales the angles unless the type is "none".
  const double freq_scale =
      s.rope_scaling_type == "none" || s.rope_scaling_factor == 0.f ? 1.0 : 1.0 / s.rope_scaling_factor;
  const std::vector<float>* freq_factors = Opt("rope_freqs.weight");
  // Rotates one head (hd values at x) in place for position pos: pair i by angle
  // pos * base^(-2i/hd) * freq_scale / factor_i.
  auto rope = [&](double* x, int pos) {
    for (int i = 0; i < half; ++i) {
      double theta = pos * std::pow(static_cast<double>(s.rope_base), -2.0 * i / hd) * freq_scale;
      if (freq_factors != nullptr) theta /= (*freq_factors)[i];
      const int i0 = s.neox_rope ? i : 2 * i, i1 = s.neox_rope ? i + half : 2 * i + 1;
      const double a = x[i0], b = x[i1];
      x[i0] = a * std::cos(theta) - b * std::sin(theta);
      x[i1] = a * std::sin(theta) + b * std::cos(theta);
    }
  };

  std::vector<Vec> x(n, Vec(e));
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < e; ++i) x[t][i] = W("token_embd.weight")[static_cast<size_t>(tokens[t]) * e + i];
  }
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    std::vector<Vec> q(n), k(n), v(n);
    for (int t = 0; t < n; ++t) {
      const Vec h = RmsNorm(x[t], 0, e, W(p + "attn_norm.weight"), s.rms_eps);
      q[t] = Linear(W(p + "attn_q.weight"), h, Opt(p + "attn_q.bias"));
      k[t] = Linear(W(p + "attn_k.weight"), h, Opt(p + "attn_k.bias"));
      v[t] = Linear(W(p + "attn_v.weight"), h, Opt(p + "attn_v.bias"));
      for (int hh = 0; hh < s.n_head; ++hh) {
        if (const auto* qn = Opt(p + "attn_q_norm.weight")) {
          const Vec nq = RmsNorm(q[t], hh * hd, hd, *qn, s.rms_eps);
          std::copy(nq.begin(), nq.end(), q[t].begin() + hh * hd);
        }
        rope(q[t].data() + hh * hd, t);
      }
      for (int hh = 0; hh < s.n_head_kv; ++hh) {
        if (const auto* kn = Opt(p + "attn_k_norm.weight")) {
          const Vec nk = RmsNorm(k[t], hh * hd, hd, *kn, s.rms_eps);
          std::copy(nk.begin(), nk.end(), k[t].begin() + hh * hd);
        }
        rope(k[t].data() + hh * hd, t);
      }
    }
    for (int t = 0; t < n; ++t) {
      Vec att(static_cast<size_t>(s.n_head) * hd, 0.0);
      for (int hh = 0; hh < s.n_head; ++hh) {
        const int kvh = hh / group;
        Vec score(t + 1);
        double mx = -1e300, sum = 0;
        for (int j = 0; j <= t; ++j) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += q[t][hh * hd + i] * k[j][kvh * hd + i];
          score[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, score[j]);
        }
        for (double& sc : score) sum += (sc = std::exp(sc - mx));
        for (int j = 0; j <= t; ++j) {
          for (int i = 0; i < hd; ++i) att[hh * hd + i] += score[j] / sum * v[j][kvh * hd + i];
        }
      }
      const Vec o = Linear(W(p + "attn_output.weight"), att, Opt(p + "attn_output.bias"));
      for (int i = 0; i < e; ++i) x[t][i] += o[i];
      const Vec h = RmsNorm(x[t], 0, e, W(p + "ffn_norm.weight"), s.rms_eps);
      Vec gate = Linear(W(p + "ffn_gate.weight"), h, Opt(p + "ffn_gate.bias"));
      const Vec up = Linear(W(p + "ffn_up.weight"), h, Opt(p + "ffn_up.bias"));
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const Vec f = Linear(W(p + "ffn_down.weight"), gate, Opt(p + "ffn_down.bias"));
      for (int i = 0; i < e; ++i) x[t][i] += f[i];
    }
  }
  const std::vector<float>& out = w.t.count("output.weight") ? W("output.weight") : W("token_embd.weight");
  std::vector<Vec> logits(n);
  for (int t = 0; t < n; ++t)
    logits[t] = Linear(out, RmsNorm(x[t], 0, e, W("output_norm.weight"), s.rms_eps), nullptr);
  return logits;
}

}  // namespace ragd::testing
