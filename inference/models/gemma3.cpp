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
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "inference/gguf_names.h"
#include "inference/kernels/vec_ops.h"
#include "inference/models/architectures.h"
#include "inference/models/decoder.h"
#include "inference/models/tensor_check.h"

namespace ragd::inference {
namespace {

constexpr int kSwaPattern = 6;               // layer il slides iff il % 6 < 5
constexpr float kSlidingRopeBase = 10000.f;  // fixed for Gemma 3's local layers

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

class Gemma3Model final : public Decoder {
 public:
  Status Load(const GgufFile& file);
  void SetOptions(const ModelOptions& options) { config_.f16_attention = options.f16_attention; }

 private:
  void Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool) override;

  std::vector<LayerWeights> layers_;
};

Status Gemma3Model::Load(const GgufFile& file) {
  ModelConfig& c = config_;
  RAGD_RETURN_IF_ERROR(LoadCommonConfig(file, "gemma3"));
  auto key = [&](std::string_view suffix) { return ArchKey(c.architecture, suffix); };
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
  for (int64_t il = 0; il < c.n_layer; ++il) {
    c.layer_sliding[il] = c.sliding_window > 0 && il % kSwaPattern < kSwaPattern - 1;
  }
  embd_scale_ = std::sqrt(static_cast<float>(c.n_embd));
  RAGD_RETURN_IF_ERROR(LoadEmbeddingAndOutput(file, /*allow_separate_output=*/false));

  const int64_t e = c.n_embd, hd = c.head_dim;
  layers_.resize(c.n_layer);
  for (int il = 0; il < static_cast<int>(c.n_layer); ++il) {
    LayerWeights& lw = layers_[il];
    LayerTensors t(file, il);
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kAttnNorm, e, &lw.attn_norm));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnQ, e, c.n_head * hd, &lw.wq));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnK, e, c.n_head_kv * hd, &lw.wk));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnV, e, c.n_head_kv * hd, &lw.wv));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnOutput, c.n_head * hd, e, &lw.wo));
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kAttnQNorm, hd, &lw.q_norm));
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kAttnKNorm, hd, &lw.k_norm));
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kPostAttnNorm, e, &lw.post_attn_norm));
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kFfnNorm, e, &lw.ffn_norm));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnGate, e, c.n_ff, &lw.gate));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnUp, e, c.n_ff, &lw.up));
    RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnDown, c.n_ff, e, &lw.down));
    RAGD_RETURN_IF_ERROR(t.Vector(tensors::kPostFfwNorm, e, &lw.post_ffw_norm));
  }
  std::vector<WeightView*> matrices;
  for (LayerWeights& lw : layers_)
    matrices.insert(matrices.end(), {&lw.wq, &lw.wk, &lw.wv, &lw.wo, &lw.gate, &lw.up, &lw.down});
  PackMatrices(file, std::move(matrices));
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
      RmsNormRows(k, lw.k_norm, c.n_head_kv, hd, c.rms_eps, k);
      for (int64_t h = 0; h < c.n_head_kv; ++h) RopeNeox(k + h * hd, hd, s_.pos[r], rope_base);
      FinishQkvRow(r);
    }
  });
  AttendLayer(il, steps, sliding ? c.sliding_window : 0, pool);

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
