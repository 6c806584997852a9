#include "inference/models/llama_family.h"

#include <string>
#include <vector>

#include "inference/gguf_names.h"
#include "inference/kernels/vec_ops.h"
#include "inference/models/decoder.h"
#include "inference/models/tensor_check.h"

namespace ragd::inference {
namespace {

struct LayerWeights {
  const float* attn_norm = nullptr;
  WeightView wq, wk, wv, wo;
  const float* bq = nullptr;  // biases: null when the file has none
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* q_norm = nullptr;  // Qwen3's per-head norms: null when absent
  const float* k_norm = nullptr;
  const float* ffn_norm = nullptr;
  WeightView gate, up, down;
  const float* b_gate = nullptr;  // feed-forward biases (some llama files): null when absent
  const float* b_up = nullptr;
  const float* b_down = nullptr;
};

// Adds `bias` (width values) to each of `rows` rows of x; no-op when null.
void AddBiasRows(const float* bias, float* x, int64_t rows, int64_t width) {
  if (bias == nullptr) return;
  for (int64_t r = 0; r < rows; ++r) AddF32(bias, x + r * width, width);
}

class LlamaFamilyModel final : public Decoder {
 public:
  explicit LlamaFamilyModel(const LlamaFamilySpec& spec) : spec_(spec) { scale_before_half_ = false; }
  Status Load(const GgufFile& file);
  void SetOptions(const ModelOptions& options) { config_.f16_attention = options.f16_attention; }

 private:
  void Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool) override;
  Status LoadRope(const GgufFile& file);
  Status LoadLayer(const GgufFile& file, int il);

  LlamaFamilySpec spec_;
  RopeSpec rope_;
  std::vector<LayerWeights> layers_;
};

Status LlamaFamilyModel::LoadRope(const GgufFile& file) {
  const ModelConfig& c = config_;
  auto key = [&](std::string_view suffix) { return ArchKey(c.architecture, suffix); };
  rope_.neox = spec_.rope_neox;
  rope_.base = static_cast<float>(file.GetFloat(key(keys::kRopeFreqBase)).value_or(10000.0));
  if (!(rope_.base > 1.f)) return Status::Corrupt("model metadata: rope.freq_base must be above 1");
  if (auto dims = file.GetInt(key(keys::kRopeDimensionCount)); dims && *dims != c.head_dim) {
    return Status::Unsupported("model metadata: rope.dimension_count " + std::to_string(*dims) +
                               " differs from the head width " + std::to_string(c.head_dim) +
                               " (partial rotary embeddings are not supported)");
  }
  const std::string scaling = file.GetString(key(keys::kRopeScalingType)).value_or("linear");
  if (scaling == "linear") {
    const double factor = file.GetFloat(key(keys::kRopeScalingFactor)).value_or(1.0);
    if (!(factor > 0)) return Status::Corrupt("model metadata: rope.scaling.factor must be positive");
    rope_.freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none" && scaling != "llama3") {
    // "llama3" scaling is carried entirely by rope_freqs.weight below.
    return Status::Unsupported("model metadata: rope scaling '" + scaling + "' is not supported");
  }
  if (file.FindTensor(std::string(tensors::kRopeFreqs)) != nullptr) {
    auto ff = RequireVector(file, std::string(tensors::kRopeFreqs), c.head_dim / 2);
    if (!ff.ok()) return ff.status();
    rope_.freq_factors = *ff;
  }
  return Status::Ok();
}

Status LlamaFamilyModel::LoadLayer(const GgufFile& file, int il) {
  const ModelConfig& c = config_;
  const int64_t e = c.n_embd, hd = c.head_dim;
  const int64_t q_width = c.n_head * hd, kv_width = c.n_head_kv * hd;
  LayerWeights& lw = layers_[il];
  LayerTensors t(file, il);
  // A piece the spec requires must be there; one it rules out must not be
  // (a file of another architecture mislabelled would compute garbage).
  auto piece = [&](Presence p, std::string_view suffix, int64_t n, const float** out) -> Status {
    if (p == Presence::kRequired) return t.Vector(suffix, n, out);
    if (p == Presence::kOptional) return t.OptionalVector(suffix, n, out);
    if (t.Has(suffix)) {
      return Status::Unsupported("model tensor '" + LayerTensor(il, suffix) + "' is not expected in a " +
                                 c.architecture + " model");
    }
    return Status::Ok();
  };
  RAGD_RETURN_IF_ERROR(t.Vector(tensors::kAttnNorm, e, &lw.attn_norm));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnQ, e, q_width, &lw.wq));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnK, e, kv_width, &lw.wk));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnV, e, kv_width, &lw.wv));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kAttnOutput, q_width, e, &lw.wo));
  RAGD_RETURN_IF_ERROR(piece(spec_.qkv_bias, tensors::kAttnQBias, q_width, &lw.bq));
  RAGD_RETURN_IF_ERROR(piece(spec_.qkv_bias, tensors::kAttnKBias, kv_width, &lw.bk));
  RAGD_RETURN_IF_ERROR(piece(spec_.qkv_bias, tensors::kAttnVBias, kv_width, &lw.bv));
  RAGD_RETURN_IF_ERROR(t.OptionalVector(tensors::kAttnOutputBias, e, &lw.bo));
  RAGD_RETURN_IF_ERROR(piece(spec_.qk_norm, tensors::kAttnQNorm, hd, &lw.q_norm));
  RAGD_RETURN_IF_ERROR(piece(spec_.qk_norm, tensors::kAttnKNorm, hd, &lw.k_norm));
  if ((lw.q_norm == nullptr) != (lw.k_norm == nullptr)) {
    return Status::Corrupt("model layer " + std::to_string(il) +
                           " has only one of attn_q_norm / attn_k_norm");
  }
  RAGD_RETURN_IF_ERROR(t.Vector(tensors::kFfnNorm, e, &lw.ffn_norm));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnGate, e, c.n_ff, &lw.gate));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnUp, e, c.n_ff, &lw.up));
  RAGD_RETURN_IF_ERROR(t.Matrix(tensors::kFfnDown, c.n_ff, e, &lw.down));
  RAGD_RETURN_IF_ERROR(t.OptionalVector(tensors::kFfnGateBias, c.n_ff, &lw.b_gate));
  RAGD_RETURN_IF_ERROR(t.OptionalVector(tensors::kFfnUpBias, c.n_ff, &lw.b_up));
  RAGD_RETURN_IF_ERROR(t.OptionalVector(tensors::kFfnDownBias, e, &lw.b_down));
  return Status::Ok();
}

Status LlamaFamilyModel::Load(const GgufFile& file) {
  RAGD_RETURN_IF_ERROR(LoadCommonConfig(file, spec_.arch));
  const ModelConfig& c = config_;
  if (file.GetInt(ArchKey(c.architecture, keys::kSlidingWindow)).value_or(0) > 0) {
    return Status::Unsupported("model metadata: sliding-window attention is not supported for " +
                               c.architecture);
  }
  RAGD_RETURN_IF_ERROR(LoadRope(file));
  RAGD_RETURN_IF_ERROR(LoadEmbeddingAndOutput(file, /*allow_separate_output=*/true));
  layers_.resize(c.n_layer);
  for (int il = 0; il < static_cast<int>(c.n_layer); ++il) RAGD_RETURN_IF_ERROR(LoadLayer(file, il));
  std::vector<WeightView*> matrices;
  for (LayerWeights& lw : layers_)
    matrices.insert(matrices.end(), {&lw.wq, &lw.wk, &lw.wv, &lw.wo, &lw.gate, &lw.up, &lw.down});
  PackMatrices(file, std::move(matrices));
  if (config_.f16_attention) config_.score_scale = config_.attention_scale;
  return Status::Ok();
}

void LlamaFamilyModel::Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool) {
  const ModelConfig& c = config_;
  const LayerWeights& lw = layers_[il];
  const int64_t e = c.n_embd, hd = c.head_dim;
  const int64_t q_width = c.n_head * hd, kv_width = c.n_head_kv * hd;

  NormRows(s_.x.data(), lw.attn_norm, m, e, s_.h.data(), pool);
  const MatMulTarget qkv[] = {{&lw.wq, s_.q}, {&lw.wk, s_.k}, {&lw.wv, s_.v}};
  MatMulShared(qkv, s_.h.data(), m, pool);

  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* q = s_.q + r * q_width;
      float* k = s_.k + r * kv_width;
      AddBiasRows(lw.bq, q, 1, q_width);
      AddBiasRows(lw.bk, k, 1, kv_width);
      AddBiasRows(lw.bv, s_.v + r * kv_width, 1, kv_width);
      if (lw.q_norm != nullptr) {
        RmsNormRows(q, lw.q_norm, c.n_head, hd, c.rms_eps, q);  // the heads are consecutive rows
        RmsNormRows(k, lw.k_norm, c.n_head_kv, hd, c.rms_eps, k);
      }
      for (int64_t h = 0; h < c.n_head; ++h) Rope(q + h * hd, hd, s_.pos[r], rope_);
      for (int64_t h = 0; h < c.n_head_kv; ++h) Rope(k + h * hd, hd, s_.pos[r], rope_);
      FinishQkvRow(r);
    }
  });
  AttendLayer(il, steps, /*window=*/0, pool);

  MatMul(lw.wo, s_.attn, m, s_.o.data(), pool);
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    float* o = s_.o.data() + begin * e;
    float* x = s_.x.data() + begin * e;
    AddBiasRows(lw.bo, o, end - begin, e);
    AddF32(o, x, (end - begin) * e);
    RmsNormRows(x, lw.ffn_norm, end - begin, e, c.rms_eps, s_.h.data() + begin * e);
  });
  const MatMulTarget gate_up[] = {{&lw.gate, s_.gate}, {&lw.up, s_.up}};
  MatMulShared(gate_up, s_.h.data(), m, pool);
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    AddBiasRows(lw.b_gate, s_.gate + begin * c.n_ff, end - begin, c.n_ff);
    AddBiasRows(lw.b_up, s_.up + begin * c.n_ff, end - begin, c.n_ff);
    // Row by row: which values take the vector exp depends on where a row ends.
    for (int64_t r = begin; r < end; ++r) SwiGlu(s_.gate + r * c.n_ff, s_.up + r * c.n_ff, c.n_ff);
  });
  MatMul(lw.down, s_.gate, m, s_.o.data(), pool);
  ForRows(m, pool, [&](int64_t begin, int64_t end) {
    AddBiasRows(lw.b_down, s_.o.data() + begin * e, end - begin, e);
    AddF32(s_.o.data() + begin * e, s_.x.data() + begin * e, (end - begin) * e);
  });
}

}  // namespace

Result<std::unique_ptr<Model>> LoadLlamaFamily(const GgufFile& file, const ModelOptions& options,
                                               const LlamaFamilySpec& spec) {
  auto model = std::make_unique<LlamaFamilyModel>(spec);
  model->SetOptions(options);
  RAGD_RETURN_IF_ERROR(model->Load(file));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ragd::inference
