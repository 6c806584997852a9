#include "tests/inference/model/tiny_gemma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "tests/inference/model/tiny_quant.h"
#include "tests/support/gguf_writer.h"

namespace ragd::testing {
namespace {

// Encodes `v` as `type`; replaces v by what the bytes decode to.
std::vector<uint8_t> Encode(TinyType type, std::vector<float>& v) {
  auto bytes = EncodeTensor(type, v);
  v = DecodeTensor(type, bytes, v.size());
  return bytes;
}

}  // namespace

TinyGemmaWeights WriteTinyGemma(const TinyGemmaSpec& s, const std::string& path,
                                const std::string& skip_tensor, const std::string& bad_shape_tensor) {
  std::mt19937 rng(s.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  GgufWriter g;
  g.AddString("general.architecture", "gemma3");
  g.AddU32("gemma3.context_length", s.context_length);
  g.AddU32("gemma3.embedding_length", s.n_embd);
  g.AddU32("gemma3.block_count", s.n_layer);
  g.AddU32("gemma3.feed_forward_length", s.n_ff);
  g.AddU32("gemma3.attention.head_count", s.n_head);
  g.AddU32("gemma3.attention.head_count_kv", s.n_head_kv);
  g.AddU32("gemma3.attention.key_length", s.head_dim);
  g.AddU32("gemma3.attention.value_length", s.head_dim);
  g.AddF32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
  g.AddU32("gemma3.attention.sliding_window", s.sliding_window);
  g.AddF32("gemma3.rope.freq_base", s.rope_base);

  TinyGemmaWeights w;
  auto add = [&](const std::string& name, int n_in, int n_out, float scale, TinyType type) {
    std::vector<float> v(static_cast<size_t>(n_in) * n_out);
    for (float& f : v) f = scale * normal(rng);
    const auto bytes = Encode(n_out == 1 ? kF32 : type, v);
    if (name != skip_tensor) {
      std::vector<uint64_t> ne = {static_cast<uint64_t>(n_in)};
      if (n_out > 1) ne.push_back(n_out);
      if (name == bad_shape_tensor) ne.back() += 1;
      auto b = bytes;
      if (name == bad_shape_tensor) b.resize(b.size() + b.size() / (n_out > 1 ? n_out : n_in) * 1, 0);
      g.AddTensor(name, ne, n_out == 1 ? kF32 : type, b);
    }
    w.t[name] = std::move(v);
  };
  auto norm = [&](const std::string& name, int n) {
    std::vector<float> v(n);
    for (float& f : v) f = 1.f + 0.2f * normal(rng);
    if (name != skip_tensor) {
      std::vector<uint64_t> ne = {static_cast<uint64_t>(n + (name == bad_shape_tensor ? 1 : 0))};
      if (name == bad_shape_tensor) v.push_back(1.f);
      g.AddF32Tensor(name, ne, v);
      if (name == bad_shape_tensor) v.pop_back();
    }
    w.t[name] = std::move(v);
  };
  const bool q = s.quant != 0;
  const int hd = s.head_dim;
  add("token_embd.weight", s.n_embd, s.n_vocab, 1.f, q ? kQ8_0 : kF32);
  norm("output_norm.weight", s.n_embd);
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const float in_scale = 1.f / std::sqrt(static_cast<float>(s.n_embd));
    norm(p + "attn_norm.weight", s.n_embd);
    add(p + "attn_q.weight", s.n_embd, s.n_head * hd, in_scale, kF32);
    add(p + "attn_k.weight", s.n_embd, s.n_head_kv * hd, in_scale, q ? kQ4_0 : kF32);
    add(p + "attn_v.weight", s.n_embd, s.n_head_kv * hd, in_scale, q ? kQ4_0 : kF32);
    add(p + "attn_output.weight", s.n_head * hd, s.n_embd, 1.f / std::sqrt(static_cast<float>(s.n_head * hd)),
        kF32);
    norm(p + "attn_q_norm.weight", hd);
    norm(p + "attn_k_norm.weight", hd);
    norm(p + "post_attention_norm.weight", s.n_embd);
    norm(p + "ffn_norm.weight", s.n_embd);
    add(p + "ffn_gate.weight", s.n_embd, s.n_ff, in_scale, q ? kF16 : kF32);
    add(p + "ffn_up.weight", s.n_embd, s.n_ff, in_scale, q ? kQ8_0 : kF32);
    add(p + "ffn_down.weight", s.n_ff, s.n_embd, 1.f / std::sqrt(static_cast<float>(s.n_ff)),
        q ? kQ4_0 : kF32);
    norm(p + "post_ffw_norm.weight", s.n_embd);
  }
  g.Write(path);
  return w;
}

namespace {

using Vec = std::vector<double>;

Vec RmsNorm(const Vec& x, const std::vector<float>& w, size_t off, size_t n) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
  Vec out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[off + i] * inv * w[i];
  return out;
}

Vec MatVec(const std::vector<float>& w, const Vec& x, size_t n_out) {
  const size_t n_in = x.size();
  Vec y(n_out, 0.0);
  for (size_t o = 0; o < n_out; ++o) {
    double acc = 0;
    for (size_t i = 0; i < n_in; ++i) acc += w[o * n_in + i] * x[i];
    y[o] = acc;
  }
  return y;
}

void Rope(double* v, int hd, int pos, double base) {
  const int half = hd / 2;
  for (int i = 0; i < half; ++i) {
    const double theta = pos * std::pow(base, -2.0 * i / hd);
    const double a = v[i], b = v[i + half];
    v[i] = a * std::cos(theta) - b * std::sin(theta);
    v[i + half] = a * std::sin(theta) + b * std::cos(theta);
  }
}

}  // namespace

std::vector<std::vector<double>> ReferenceForward(const TinyGemmaSpec& s, const TinyGemmaWeights& w,
                                                  const std::vector<int32_t>& tokens) {
  const int n = static_cast<int>(tokens.size()), e = s.n_embd, hd = s.head_dim;
  auto W = [&](const std::string& name) -> const std::vector<float>& { return w.t.at(name); };
  std::vector<Vec> x(n, Vec(e));
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < e; ++i) x[t][i] = W("token_embd.weight")[tokens[t] * e + i] * std::sqrt(double(e));
  }
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const bool sliding = l % 6 != 5;
    const double base = sliding ? 10000.0 : s.rope_base;
    std::vector<Vec> q(n), k(n), v(n);
    for (int t = 0; t < n; ++t) {
      const Vec h = RmsNorm(x[t], W(p + "attn_norm.weight"), 0, e);
      q[t] = MatVec(W(p + "attn_q.weight"), h, s.n_head * hd);
      k[t] = MatVec(W(p + "attn_k.weight"), h, s.n_head_kv * hd);
      v[t] = MatVec(W(p + "attn_v.weight"), h, s.n_head_kv * hd);
      for (int hh = 0; hh < s.n_head; ++hh) {
        Vec nq = RmsNorm(q[t], W(p + "attn_q_norm.weight"), hh * hd, hd);
        Rope(nq.data(), hd, t, base);
        for (int i = 0; i < hd; ++i) q[t][hh * hd + i] = nq[i] / std::sqrt(double(hd));
      }
      for (int hh = 0; hh < s.n_head_kv; ++hh) {
        Vec nk = RmsNorm(k[t], W(p + "attn_k_norm.weight"), hh * hd, hd);
        Rope(nk.data(), hd, t, base);
        for (int i = 0; i < hd; ++i) k[t][hh * hd + i] = nk[i];
      }
    }
    for (int t = 0; t < n; ++t) {
      Vec att(s.n_head * hd, 0.0);
      for (int hh = 0; hh < s.n_head; ++hh) {
        const int kvh = hh / (s.n_head / s.n_head_kv);
        std::vector<double> sc;
        std::vector<int> keys;
        for (int j = 0; j <= t; ++j) {
          if (sliding && t - j >= s.sliding_window) continue;
          double d = 0;
          for (int i = 0; i < hd; ++i) d += q[t][hh * hd + i] * k[j][kvh * hd + i];
          sc.push_back(d);
          keys.push_back(j);
        }
        double mx = sc[0], sum = 0;
        for (double d : sc) mx = std::max(mx, d);
        for (double& d : sc) sum += (d = std::exp(d - mx));
        for (size_t a = 0; a < keys.size(); ++a) {
          for (int i = 0; i < hd; ++i) att[hh * hd + i] += sc[a] / sum * v[keys[a]][kvh * hd + i];
        }
      }
      const Vec o =
          RmsNorm(MatVec(W(p + "attn_output.weight"), att, e), W(p + "post_attention_norm.weight"), 0, e);
      for (int i = 0; i < e; ++i) x[t][i] += o[i];
      const Vec h = RmsNorm(x[t], W(p + "ffn_norm.weight"), 0, e);
      Vec g = MatVec(W(p + "ffn_gate.weight"), h, s.n_ff);
      const Vec u = MatVec(W(p + "ffn_up.weight"), h, s.n_ff);
      for (int i = 0; i < s.n_ff; ++i) {
        const double a = g[i];
        g[i] = 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a))) * u[i];
      }
      const Vec f = RmsNorm(MatVec(W(p + "ffn_down.weight"), g, e), W(p + "post_ffw_norm.weight"), 0, e);
      for (int i = 0; i < e; ++i) x[t][i] += f[i];
    }
  }
  std::vector<Vec> logits(n);
  for (int t = 0; t < n; ++t)
    logits[t] = MatVec(W("token_embd.weight"), RmsNorm(x[t], W("output_norm.weight"), 0, e), s.n_vocab);
  return logits;
}

}  // namespace ragd::testing
