#include "inference/models/decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/huge_pages.h"
#include "inference/gguf_names.h"
#include "inference/kernels/vec_ops.h"
#include "inference/models/attention.h"
#include "inference/models/tensor_check.h"

namespace ragd::inference {
namespace {

// Rows of logits a step returns for one sequence.
int64_t OutputRows(const SequenceStep& st) {
  if (st.logits == nullptr && st.logits_view == nullptr) return 0;
  return st.all_logits ? static_cast<int64_t>(st.tokens.size()) : 1;
}

}  // namespace

void DecoderScratch::Resize(const ModelConfig& c, int64_t m) {
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

Status Decoder::LoadCommonConfig(const GgufFile& file, std::string_view arch) {
  ModelConfig& c = config_;
  c.architecture = std::string(arch);
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
  if (!(c.rms_eps > 0.f)) return Status::Corrupt("model metadata: RMS norm epsilon must be positive");
  c.attention_scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
  c.layer_sliding.assign(c.n_layer, false);
  return Status::Ok();
}

Status Decoder::LoadEmbeddingAndOutput(const GgufFile& file, bool allow_separate_output) {
  ModelConfig& c = config_;
  // The vocabulary size is the token embedding's row count.
  const std::string embd_name(tensors::kTokenEmbd);
  const GgufTensor* embd = file.FindTensor(embd_name);
  if (embd == nullptr) return Status::Corrupt("model tensor '" + embd_name + "' is missing");
  if (embd->n_dims != 2) return Status::Corrupt("model tensor '" + embd_name + "' is not 2-dimensional");
  c.n_vocab = static_cast<int64_t>(embd->ne[1]);
  auto tok = RequireMatrix(file, embd_name, c.n_embd, c.n_vocab);
  if (!tok.ok()) return tok.status();
  token_embd_ = *tok;
  auto out_norm = RequireVector(file, std::string(tensors::kOutputNorm), c.n_embd);
  if (!out_norm.ok()) return out_norm.status();
  output_norm_ = *out_norm;
  const std::string out_name(tensors::kOutput);
  tied_output_ = file.FindTensor(out_name) == nullptr;
  if (!tied_output_) {
    if (!allow_separate_output) {
      return Status::Unsupported(c.architecture + " model with a separate " + out_name +
                                 " is not supported (expects tied)");
    }
    auto out = RequireMatrix(file, out_name, c.n_embd, c.n_vocab);
    if (!out.ok()) return out.status();
    output_ = *out;
  }
  // The logits feed no later layer, so the output product may sum whole
  // blocks (a third of llama.cpp's float work per logit, ~1e-6 relative off
  // its values); the layers keep its order, whose roundings they amplify.
  output().order = SumOrder::kBlockSums;
  return Status::Ok();
}

void Decoder::Pack(const GgufFile& file, WeightView* w) {
  PackedWeightPtr p = PackWeight(
      *w, [&](const uint8_t* begin, const uint8_t* end) { file.DropData(begin, end); }, packed_memory_.get());
  if (p == nullptr) return;
  file.DropData(w->data, w->data + w->row_bytes * w->n_out);  // pages straddling the released ranges
  w->packed = p.get();
  packed_.push_back(std::move(p));
}

void Decoder::PackMatrices(const GgufFile& file, std::vector<WeightView*> matrices) {
  // A separate token embedding is only looked up row by row: it stays in
  // the mapped file, whose untouched rows cost no memory.
  matrices.push_back(&output());
  // Packed layouts are at most a few percent larger than the blocks (plus
  // padding to cache lines); if they outgrow this, the arena takes more.
  size_t gguf_bytes = 0;
  for (const WeightView* w : matrices) gguf_bytes += w->row_bytes * w->n_out;
  packed_memory_ = std::make_unique<std::pmr::monotonic_buffer_resource>(
      gguf_bytes + gguf_bytes / 16 + kHugePageBytes, HugePageResource());
  for (WeightView* w : matrices) Pack(file, w);
}

void Decoder::NormRows(const float* in, const float* weight, int64_t rows, int64_t width, float* out,
                       ThreadPool* pool) const {
  ForRows(rows, pool, [&](int64_t begin, int64_t end) {
    RmsNormRows(in + begin * width, weight, end - begin, width, config_.rms_eps, out + begin * width);
  });
}

void Decoder::FinishQkvRow(int64_t r) {
  const ModelConfig& c = config_;
  const int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_head_kv * c.head_dim;
  float* q = s_.q + r * q_width;
  if (!c.f16_attention || scale_before_half_) ScaleF32(c.attention_scale, q, q_width);
  if (c.f16_attention) {  // the cache keeps k and v as halves
    RoundToHalf(q, q_width);
    FloatToHalfRow(s_.k + r * kv_width, kv_width, s_.k16.data() + r * kv_width);
    FloatToHalfRow(s_.v + r * kv_width, kv_width, s_.v16.data() + r * kv_width);
  }
}

void Decoder::AttendLayer(int il, std::span<SequenceStep> steps, int64_t window, ThreadPool* pool) {
  const ModelConfig& c = config_;
  const int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_head_kv * c.head_dim;
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
  Attend(c, il, window, seqs, pool);
  for (size_t si = 0; si < steps.size(); ++si) StoreKv(c, il, seqs[si], steps[si].cache);
}

Status Decoder::Forward(std::span<SequenceStep> steps, ThreadPool* pool) {
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

  int64_t row = 0;
  for (const SequenceStep& st : steps) {
    for (size_t i = 0; i < st.tokens.size(); ++i, ++row) {
      float* x = s_.x.data() + row * c.n_embd;
      DequantizeRow(token_embd_, st.tokens[i], x);
      if (embd_scale_ != 1.f) ScaleF32(embd_scale_, x, c.n_embd);
      s_.pos[row] = st.cache->n_past() + static_cast<int64_t>(i);
    }
  }

  for (int il = 0; il < static_cast<int>(c.n_layer); ++il) Layer(il, steps, m, pool);

  // Final norm of the rows that need logits, then the output projection.
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
  if (n_out_rows > 0) MatMul(output(), s_.out_rows.data(), n_out_rows, s_.logits.data(), pool);
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

}  // namespace ragd::inference
