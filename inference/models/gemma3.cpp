// Gemma 3 (GGUF architecture "gemma3"), computed as llama.cpp does:
//   x = token_embd[tok] * sqrt(n_embd)
//   per layer: h = norm(x)*attn_norm; q,k,v = W h; per-head norm(q)*q_norm,
//     norm(k)*k_norm; NEOX RoPE (base 10000 on sliding layers, rope.freq_base
//     on global ones); q *= 1/sqrt(head_dim); causal GQA attention (sliding
//     layers see the last `sliding_window` keys); o = norm(W_o a)*post_attn_norm;
//     x += o; h = norm(x)*ffn_norm; f = W_down(gelu_tanh(W_gate h) * W_up h);
//     x += norm(f)*post_ffw_norm
//   logits = token_embd . (norm(x)*output_norm)   (tied output, no soft-capping)
// Norm weights in the GGUF already include Gemma's "+1". Every sixth layer
// (il % 6 == 5) is global, the others slide (llama.cpp set_swa_pattern(6)).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "common/huge_pages.h"
#include "inference/gguf_names.h"
#include "inference/models/architectures.h"
#include "inference/models/attention.h"
#include "inference/models/tensor_check.h"
#include "inference/models/vec_ops.h"

namespace ragd::inference {
namespace {

constexpr int kSwaPattern = 6;               // layer il slides iff il % 6 < 5
constexpr float kSlidingRopeBase = 10000.f;  // fixed for Gemma 3's local layers
// From this many rows on, element-wise work (norms, RoPE, GELU) is split over
// the pool: bench_batch on 2 cores, 900 positions, 4 and 8 sequences: 18.6
// and 25.4 ms per step with 16 here, 17.8 and 25.1 with 2 (three runs each,
// alternated; the rows' results do not change).
constexpr int64_t kParallelRows = 2;

struct LayerWeights {
  const float* attn_norm;
  WeightView wq, wk, wv, wo;
  const float* q_norm;
  const float* k_norm;
  const float* post_attn_norm;
  const float* ffn_norm;
  WeightView gate, up, down;
  const float* post_ffw_norm;
};

// Activations of one step, sized for its total number of new tokens. The
// attention's buffers (q, k, v, attn) and the feed-forward's (gate, up) are
// never live at once: they share one allocation, the larger of the two.
struct Scratch {
  std::vector<float> x, h, o, out_rows, logits;
  std::vector<float> phase;        // q, k, v, attn, then gate, up
  std::vector<uint16_t> k16, v16;  // k and v as halves, for half caches
  std::vector<int64_t> pos;        // each row's position in its sequence
  float *q = nullptr, *k = nullptr, *v = nullptr, *attn = nullptr, *gate = nullptr, *up = nullptr;
  void Resize(const ModelConfig& c, int64_t m) {
    pos.resize(m);
    x.resize(m * c.n_embd);
    h.resize(m * c.n_embd);
    o.resize(m * c.n_embd);
    const int64_t q_size = m * c.n_head * c.head_dim, kv_size = m * c.n_head_kv * c.head_dim;
    const int64_t ff_size = m * c.n_ff;
    phase.resize(std::max(2 * q_size + 2 * kv_size, 2 * ff_size));
    q = phase.data();
    k = q + q_size;
    v = k + kv_size;
    attn = v + kv_size;
    gate = phase.data();
    up = gate + ff_size;
    if (c.f16_attention) {
      k16.resize(kv_size);
      v16.resize(kv_size);
    }
  }
};

// Rows of logits a step returns for one sequence.
int64_t OutputRows(const SequenceStep& st) {
  if (st.logits == nullptr && st.logits_view == nullptr) return 0;
  return st.all_logits ? static_cast<int64_t>(st.tokens.size()) : 1;
}

class Gemma3Model final : public Model {
 public:
  const ModelConfig& config() const override { return config_; }
  Status Forward(std::span<SequenceStep> steps, ThreadPool* pool) override;

  Status Load(const GgufFile& file);
  void SetOptions(const ModelOptions& options) { config_.f16_attention = options.f16_attention; }

 private:
  // fn(begin, end) over rows [0, m), on the pool when there are enough rows.
  template <typename Fn>
  static void ForRows(int64_t m, ThreadPool* pool, Fn&& fn) {
    if (pool != nullptr && m >= kParallelRows) {
      pool->Run(m, [&](int64_t begin, int64_t end, int) { fn(begin, end); });
    } else {
      fn(0, m);
    }
  }
  void NormRows(const float* in, const float* weight, int64_t rows, int64_t width, float* out,
                ThreadPool* pool) const {
    ForRows(rows, pool, [&](int64_t begin, int64_t end) {
      RmsNormRows(in + begin * width, weight, end - begin, width, config_.rms_eps, out + begin * width);
    });
  }
  void Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool);
  // Re-lays w out for the active kernels where they have a packed layout for
  // its type (kernels.h PackWeight), dropping the file pages it was read from.
  void Pack(const GgufFile& file, WeightView* w);

  ModelConfig config_;
  WeightView token_embd_;
  const float* output_norm_ = nullptr;
  std::vector<LayerWeights> layers_;
  Scratch s_;
  // The packed weights' bytes: one arena in huge pages, so that the layer
  // matrices (under 2 MiB each) share them too. Declared before packed_,
  // which it must outlive.
  std::unique_ptr<std::pmr::monotonic_buffer_resource> packed_memory_;
  std::vector<PackedWeightPtr> packed_;  // what the views' `packed` point to
};

void Gemma3Model::Pack(const GgufFile& file, WeightView* w) {
  PackedWeightPtr p = PackWeight(
      *w, [&](const uint8_t* begin, const uint8_t* end) { file.DropData(begin, end); }, packed_memory_.get());
  if (p == nullptr) return;
  file.DropData(w->data, w->data + w->row_bytes * w->n_out);  // pages straddling the released ranges
  w->packed = p.get();
  packed_.push_back(std::move(p));
}

Status Gemma3Model::Load(const GgufFile& file) {
  ModelConfig& c = config_;
  c.architecture = "gemma3";
  auto key = [&](std::string_view suffix) { return ArchKey(c.architecture, suffix); };
  auto get = [&](std::string_view suffix, int64_t min, int64_t max, int64_t* out) -> Status {
    auto v = RequireInt(file, key(suffix), min, max);
    if (!v.ok()) return v.status();
    *out = *v;
    return Status::Ok();
  };
  RAGD_RETURN_IF_ERROR(get(keys::kEmbeddingLength, 1, 1 << 16, &c.n_embd));
  RAGD_RETURN_IF_ERROR(get(keys::kBlockCount, 1, 1024, &c.n_layer));
  RAGD_RETURN_IF_ERROR(get(keys::kFeedForwardLength, 1, 1 << 20, &c.n_ff));
  RAGD_RETURN_IF_ERROR(get(keys::kHeadCount, 1, 1024, &c.n_head));
  RAGD_RETURN_IF_ERROR(get(keys::kContextLength, 1, int64_t{1} << 24, &c.context_length));
  c.n_head_kv = file.GetInt(key(keys::kHeadCountKv)).value_or(c.n_head);
  if (c.n_head_kv < 1 || c.n_head % c.n_head_kv != 0) {
    return Status::Corrupt("model metadata: head_count " + std::to_string(c.n_head) +
                           " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
  }
  c.head_dim = file.GetInt(key(keys::kKeyLength)).value_or(c.n_embd / c.n_head);
  const int64_t value_length = file.GetInt(key(keys::kValueLength)).value_or(c.head_dim);
  if (c.head_dim < 2 || c.head_dim % 2 != 0 || c.head_dim > 4096 || value_length != c.head_dim) {
    return Status::Unsupported("model metadata: key_length " + std::to_string(c.head_dim) +
                               " / value_length " + std::to_string(value_length) +
                               " not supported (even, equal)");
  }
  c.rms_eps = static_cast<float>(file.GetFloat(key(keys::kRmsEps)).value_or(1e-6));
  c.sliding_window = file.GetInt(key(keys::kSlidingWindow)).value_or(0);
  if (c.sliding_window < 0) return Status::Corrupt("model metadata: negative sliding_window");
  c.rope_base_global = static_cast<float>(file.GetFloat(key(keys::kRopeFreqBase)).value_or(1e6));
  c.rope_base_sliding = kSlidingRopeBase;
  if (auto scaling = file.GetString(key(keys::kRopeScalingType)); scaling && *scaling != "none") {
    return Status::Unsupported("model metadata: rope scaling '" + *scaling + "' is not supported");
  }
  if (file.GetFloat(key(keys::kFinalLogitSoftcap)) || file.GetFloat(key(keys::kAttnLogitSoftcap))) {
    return Status::Unsupported("model metadata: logit soft-capping is not supported for gemma3");
  }
  c.attention_scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
  c.layer_sliding.resize(c.n_layer);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    c.layer_sliding[il] = c.sliding_window > 0 && il % kSwaPattern < kSwaPattern - 1;
  }

  const int64_t e = c.n_embd, hd = c.head_dim;
  // The vocabulary size is the token embedding's row count.
  const std::string embd_name(tensors::kTokenEmbd);
  const GgufTensor* embd = file.FindTensor(embd_name);
  if (embd == nullptr) return Status::Corrupt("model tensor '" + embd_name + "' is missing");
  if (embd->n_dims != 2) return Status::Corrupt("model tensor '" + embd_name + "' is not 2-dimensional");
  c.n_vocab = static_cast<int64_t>(embd->ne[1]);
  auto tok = RequireMatrix(file, embd_name, e, c.n_vocab);
  if (!tok.ok()) return tok.status();
  token_embd_ = *tok;
  // The logits feed no later layer, so the output product may sum whole
  // blocks (a third of llama.cpp's float work per logit, ~1e-6 relative off
  // its values); the layers keep its order, whose roundings they amplify.
  token_embd_.order = SumOrder::kBlockSums;
  auto out_norm = RequireVector(file, std::string(tensors::kOutputNorm), e);
  if (!out_norm.ok()) return out_norm.status();
  output_norm_ = *out_norm;
  if (file.FindTensor(std::string(tensors::kOutput)) != nullptr) {
    return Status::Unsupported("gemma3 model with a separate output.weight is not supported (expects tied)");
  }

  layers_.resize(c.n_layer);
  for (int il = 0; il < static_cast<int>(c.n_layer); ++il) {
    LayerWeights& lw = layers_[il];
    auto mat = [&](std::string_view name, int64_t n_in, int64_t n_out, WeightView* out) -> Status {
      auto w = RequireMatrix(file, LayerTensor(il, name), n_in, n_out);
      if (!w.ok()) return w.status();
      *out = *w;
      return Status::Ok();
    };
    auto vec = [&](std::string_view name, int64_t n, const float** out) -> Status {
      auto w = RequireVector(file, LayerTensor(il, name), n);
      if (!w.ok()) return w.status();
      *out = *w;
      return Status::Ok();
    };
    RAGD_RETURN_IF_ERROR(vec(tensors::kAttnNorm, e, &lw.attn_norm));
    RAGD_RETURN_IF_ERROR(mat(tensors::kAttnQ, e, c.n_head * hd, &lw.wq));
    RAGD_RETURN_IF_ERROR(mat(tensors::kAttnK, e, c.n_head_kv * hd, &lw.wk));
    RAGD_RETURN_IF_ERROR(mat(tensors::kAttnV, e, c.n_head_kv * hd, &lw.wv));
    RAGD_RETURN_IF_ERROR(mat(tensors::kAttnOutput, c.n_head * hd, e, &lw.wo));
    RAGD_RETURN_IF_ERROR(vec(tensors::kAttnQNorm, hd, &lw.q_norm));
    RAGD_RETURN_IF_ERROR(vec(tensors::kAttnKNorm, hd, &lw.k_norm));
    RAGD_RETURN_IF_ERROR(vec(tensors::kPostAttnNorm, e, &lw.post_attn_norm));
    RAGD_RETURN_IF_ERROR(vec(tensors::kFfnNorm, e, &lw.ffn_norm));
    RAGD_RETURN_IF_ERROR(mat(tensors::kFfnGate, e, c.n_ff, &lw.gate));
    RAGD_RETURN_IF_ERROR(mat(tensors::kFfnUp, e, c.n_ff, &lw.up));
    RAGD_RETURN_IF_ERROR(mat(tensors::kFfnDown, c.n_ff, e, &lw.down));
    RAGD_RETURN_IF_ERROR(vec(tensors::kPostFfwNorm, e, &lw.post_ffw_norm));
  }
  std::vector<WeightView*> matrices = {&token_embd_};
  for (LayerWeights& lw : layers_)
    matrices.insert(matrices.end(), {&lw.wq, &lw.wk, &lw.wv, &lw.wo, &lw.gate, &lw.up, &lw.down});
  // Packed layouts are at most a few percent larger than the blocks (plus
  // padding to cache lines); if they outgrow this, the arena takes more.
  size_t gguf_bytes = 0;
  for (const WeightView* w : matrices) gguf_bytes += w->row_bytes * w->n_out;
  packed_memory_ = std::make_unique<std::pmr::monotonic_buffer_resource>(
      gguf_bytes + gguf_bytes / 16 + kHugePageBytes, HugePageResource());
  for (WeightView* w : matrices) Pack(file, w);
  return Status::Ok();
}

Status Gemma3Model::Forward(std::span<SequenceStep> steps, ThreadPool* pool) {
  const ModelConfig& c = config_;
  int64_t m = 0, n_out_rows = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& st = steps[i];
    const std::string which = "sequence " + std::to_string(i);
    if (st.cache == nullptr) return Status::InvalidArgument(which + ": no cache");
    if (st.tokens.empty()) return Status::InvalidArgument(which + ": no tokens");
    if (st.cache->n_past() + static_cast<int64_t>(st.tokens.size()) > st.cache->capacity()) {
      return Status::OutOfRange(which + ": " + std::to_string(st.cache->n_past() + st.tokens.size()) +
                                " positions exceed the cache capacity " +
                                std::to_string(st.cache->capacity()));
    }
    for (int32_t t : st.tokens) {
      if (t < 0 || t >= c.n_vocab) {
        return Status::OutOfRange(which + ": token id " + std::to_string(t) +
                                  " is outside the vocabulary [0, " + std::to_string(c.n_vocab) + ")");
      }
    }
    m += static_cast<int64_t>(st.tokens.size());
    n_out_rows += OutputRows(st);
  }
  if (m == 0) return Status::Ok();
  s_.Resize(c, m);

  // Embeddings, scaled by sqrt(n_embd).
  const float embd_scale = std::sqrt(static_cast<float>(c.n_embd));
  int64_t row = 0;
  for (const SequenceStep& st : steps) {
    for (size_t i = 0; i < st.tokens.size(); ++i, ++row) {
      float* x = s_.x.data() + row * c.n_embd;
      DequantizeRow(token_embd_, st.tokens[i], x);
      ScaleF32(embd_scale, x, c.n_embd);
      s_.pos[row] = st.cache->n_past() + static_cast<int64_t>(i);
    }
  }

  for (int il = 0; il < static_cast<int>(c.n_layer); ++il) Layer(il, steps, m, pool);

  // Final norm of the rows that need logits, then the tied output projection.
  s_.out_rows.resize(n_out_rows * c.n_embd);
  row = 0;
  int64_t out_row = 0;
  for (const SequenceStep& st : steps) {
    const int64_t n = static_cast<int64_t>(st.tokens.size());
    const int64_t rows = OutputRows(st);
    if (rows > 0) {
      std::memcpy(s_.out_rows.data() + out_row * c.n_embd, s_.x.data() + (row + n - rows) * c.n_embd,
                  rows * c.n_embd * sizeof(float));
    }
    out_row += rows;
    row += n;
  }
  RmsNormRows(s_.out_rows.data(), output_norm_, n_out_rows, c.n_embd, c.rms_eps, s_.out_rows.data());
  // Grown, never shrunk: a row of logits is a megabyte, and resizing up after
  // a step with fewer rows (the draft rows come and go) would zero-fill it.
  const size_t n_logits = static_cast<size_t>(n_out_rows * c.n_vocab);
  if (s_.logits.size() < n_logits) s_.logits.resize(n_logits);
  if (n_out_rows > 0) MatMul(token_embd_, s_.out_rows.data(), n_out_rows, s_.logits.data(), pool);
  out_row = 0;
  for (SequenceStep& st : steps) {
    const int64_t rows = OutputRows(st);
    const std::span<const float> mine(s_.logits.data() + out_row * c.n_vocab, rows * c.n_vocab);
    if (st.logits != nullptr) st.logits->assign(mine.begin(), mine.end());
    if (st.logits_view != nullptr) *st.logits_view = mine;
    out_row += rows;
    st.cache->Advance(static_cast<int64_t>(st.tokens.size()));
  }
  return Status::Ok();
}

void Gemma3Model::Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool) {
  const ModelConfig& c = config_;
  const LayerWeights& lw = layers_[il];
  const int64_t e = c.n_embd, hd = c.head_dim;
  const int64_t q_width = c.n_head * hd, kv_width = c.n_head_kv * hd;
  const bool sliding = c.layer_sliding[il];
  const float rope_base = sliding ? c.rope_base_sliding : c.rope_base_global;

  NormRows(s_.x.data(), lw.attn_norm, m, e, s_.h.data(), pool);
  const MatMulTarget qkv[] = {{&lw.wq, s_.q}, {&lw.wk, s_.k}, {&lw.wv, s_.v}};
  MatMulShared(qkv, s_.h.data(), m, pool);

  // Every row of every sequence in one pass over the pool (a decode step's
  // sequences have one row each: one by one, they ran on one thread).
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* q = s_.q + r * q_width;
      float* k = s_.k + r * kv_width;
      RmsNormRows(q, lw.q_norm, c.n_head, hd, c.rms_eps, q);  // the heads are consecutive rows
      for (int64_t h = 0; h < c.n_head; ++h) RopeNeox(q + h * hd, hd, s_.pos[r], rope_base);
      ScaleF32(c.attention_scale, q, q_width);
      RmsNormRows(k, lw.k_norm, c.n_head_kv, hd, c.rms_eps, k);
      for (int64_t h = 0; h < c.n_head_kv; ++h) RopeNeox(k + h * hd, hd, s_.pos[r], rope_base);
      if (c.f16_attention) {  // the cache keeps k and v as halves
        RoundToHalf(q, q_width);
        FloatToHalfRow(k, kv_width, s_.k16.data() + r * kv_width);
        FloatToHalfRow(s_.v + r * kv_width, kv_width, s_.v16.data() + r * kv_width);
      }
    }
  });
  std::vector<AttentionSeq> seqs(steps.size());
  int64_t row = 0;
  for (size_t si = 0; si < steps.size(); ++si) {
    const SequenceStep& st = steps[si];
    const int64_t n = static_cast<int64_t>(st.tokens.size());
    AttentionSeq& a = seqs[si];
    a.cache = st.cache;
    a.p0 = st.cache->n_past();
    a.n = n;
    a.q = s_.q + row * q_width;
    if (c.f16_attention) {
      a.k16 = s_.k16.data() + row * kv_width;
      a.v16 = s_.v16.data() + row * kv_width;
    } else {
      a.k = s_.k + row * kv_width;
      a.v = s_.v + row * kv_width;
    }
    a.out = s_.attn + row * q_width;
    row += n;
  }
  Attend(c, il, sliding ? c.sliding_window : 0, seqs, pool);
  for (size_t si = 0; si < steps.size(); ++si) StoreKv(c, il, seqs[si], steps[si].cache);

  MatMul(lw.wo, s_.attn, m, s_.o.data(), pool);
  // Post-attention norm, residual, pre-feed-forward norm: row by row, in one
  // pass over the pool.
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    float* o = s_.o.data() + begin * e;
    float* x = s_.x.data() + begin * e;
    RmsNormRows(o, lw.post_attn_norm, end - begin, e, c.rms_eps, o);
    AddF32(o, x, (end - begin) * e);
    RmsNormRows(x, lw.ffn_norm, end - begin, e, c.rms_eps, s_.h.data() + begin * e);
  });
  const MatMulTarget gate_up[] = {{&lw.gate, s_.gate}, {&lw.up, s_.up}};
  MatMulShared(gate_up, s_.h.data(), m, pool);
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    GeluTanhHalf(s_.gate + begin * c.n_ff, (end - begin) * c.n_ff);  // llama.cpp's half table
    MulF32(s_.up + begin * c.n_ff, s_.gate + begin * c.n_ff, (end - begin) * c.n_ff);
  });
  MatMul(lw.down, s_.gate, m, s_.o.data(), pool);
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    float* o = s_.o.data() + begin * e;
    RmsNormRows(o, lw.post_ffw_norm, end - begin, e, c.rms_eps, o);
    AddF32(o, s_.x.data() + begin * e, (end - begin) * e);
  });
}

}  // namespace

Result<std::unique_ptr<Model>> LoadGemma3(const GgufFile& file, const ModelOptions& options) {
  auto model = std::make_unique<Gemma3Model>();
  model->SetOptions(options);
  RAGD_RETURN_IF_ERROR(model->Load(file));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ragd::inference
