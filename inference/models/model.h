// The architecture-neutral interface of a decoder-only transformer and its
// per-sequence KV cache. Internal to inference/: the engine and (later) the
// batching scheduler call it; app/ never sees it.
//
// A forward step takes any number of sequences, each with its own KV cache and
// a run of new tokens, and computes all of them in one pass: the weight matrix
// products run once over the concatenated tokens (m = total new tokens), the
// attention runs per sequence against its own cache. One prompt prefill is a
// step with one sequence and many tokens; one decode step of several
// concurrent requests is a step with many sequences of one token each.
//
// Thread-safety: a Model is immutable after loading except for its scratch
// buffers, so Forward() must not run concurrently on the same Model (the
// engine serializes it). A KvCache belongs to one sequence and is touched only
// by the Forward() call that it is passed to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "inference/gguf.h"
#include "inference/kernels/kernels.h"

namespace ragd::inference {

// Hyper-parameters read from the GGUF metadata.
struct ModelConfig {
  std::string architecture;           // "gemma3"
  int64_t n_vocab = 0;                // rows of the token embedding
  int64_t n_embd = 0;                 // residual stream width
  int64_t n_layer = 0;                // transformer blocks
  int64_t n_ff = 0;                   // feed-forward hidden width
  int64_t n_head = 0;                 // query heads
  int64_t n_head_kv = 0;              // key/value heads (GQA: n_head % n_head_kv == 0)
  int64_t head_dim = 0;               // per-head width of q, k and v
  float rms_eps = 1e-6f;              // RMSNorm epsilon
  int64_t context_length = 0;         // training context
  int64_t sliding_window = 0;         // keys a sliding layer sees (0: none slide)
  float rope_base_global = 10000.f;   // RoPE base of full-attention layers
  float rope_base_sliding = 10000.f;  // RoPE base of sliding-window layers
  float attention_scale = 1.f;        // multiplies q before q.k
  float score_scale = 1.f;            // multiplies q.k before the softmax (half-precision attention)
  std::vector<bool> layer_sliding;    // per layer: uses the sliding window
  bool f16_attention = false;         // see ModelOptions
};

// Choices of how to compute, independent of the file.
struct ModelOptions {
  // Round queries, keys, values and attention weights to half precision and
  // sum attention in the order of llama.cpp's one-token step with its default
  // F16 KV cache: logits then equal llama.cpp's bit for bit on x86 with AVX2.
  bool f16_attention = true;
};

// Keys and values of one sequence, per layer. A full-attention layer keeps
// `capacity` positions; a sliding layer keeps its window plus `spare` slots as
// a ring (position p lives in slot p % slots). The spare slots let a step
// write a few positions past the window and Rewind() them (speculative drafts)
// without overwriting keys the window still needs. Memory is allocated up front.
//
// Rows are IEEE halves when the model's attention rounds keys and values to
// half precision anyway (config.f16_attention, as llama.cpp's default F16
// cache): lossless, and half the memory and the memory traffic of floats.
// Otherwise they are floats. k()/v() give float rows, k16()/v16() half rows;
// only the accessors of the cache's own kind may be called.
class KvCache {
 public:
  KvCache(const ModelConfig& config, int64_t capacity, int64_t spare = 0);
  // Bytes a cache of these dimensions holds (what the constructor allocates).
  static size_t BytesFor(const ModelConfig& config, int64_t capacity, int64_t spare = 0);
  // Bytes of one K or V row (all kv heads) in a cache for `config`.
  static size_t RowBytes(const ModelConfig& config);

  int64_t n_past() const { return n_past_; }        // positions already stored
  int64_t capacity() const { return capacity_; }    // most positions it can hold
  int64_t row_width() const { return row_width_; }  // values per K or V row (all kv heads)
  bool half() const { return half_; }               // rows of halves, not floats
  size_t row_bytes() const { return row_width_ * (half_ ? sizeof(uint16_t) : sizeof(float)); }
  int n_layer() const { return static_cast<int>(layers_.size()); }
  size_t bytes() const;  // memory held

  // Slots of one layer: K or V rows of n_head_kv * head_dim values.
  int64_t slots(int layer) const { return layers_[layer].slots; }
  // Whether `layer` still holds position `pos` (< n_past(), not overwritten
  // in the ring by a later one, rewound or not).
  bool Holds(int layer, int64_t pos) const { return pos < n_past_ && pos >= written_ - layers_[layer].slots; }
  float* k(int layer, int64_t pos) { return Row(layers_[layer].k, layer, pos); }
  float* v(int layer, int64_t pos) { return Row(layers_[layer].v, layer, pos); }
  const float* k(int layer, int64_t pos) const { return const_cast<KvCache*>(this)->k(layer, pos); }
  const float* v(int layer, int64_t pos) const { return const_cast<KvCache*>(this)->v(layer, pos); }
  uint16_t* k16(int layer, int64_t pos) { return Row(layers_[layer].k16, layer, pos); }
  uint16_t* v16(int layer, int64_t pos) { return Row(layers_[layer].v16, layer, pos); }
  const uint16_t* k16(int layer, int64_t pos) const { return const_cast<KvCache*>(this)->k16(layer, pos); }
  const uint16_t* v16(int layer, int64_t pos) const { return const_cast<KvCache*>(this)->v16(layer, pos); }
  // A row of either kind as row_bytes() bytes (for copying rows).
  void* k_bytes(int layer, int64_t pos) {
    return half_ ? static_cast<void*>(k16(layer, pos)) : k(layer, pos);
  }
  void* v_bytes(int layer, int64_t pos) {
    return half_ ? static_cast<void*>(v16(layer, pos)) : v(layer, pos);
  }
  const void* k_bytes(int layer, int64_t pos) const {
    return const_cast<KvCache*>(this)->k_bytes(layer, pos);
  }
  const void* v_bytes(int layer, int64_t pos) const {
    return const_cast<KvCache*>(this)->v_bytes(layer, pos);
  }

  void Advance(int64_t n) {
    n_past_ += n;
    written_ = std::max(written_, n_past_);
  }
  // Forgets the positions from `n_past` on (n_past <= n_past()). A sliding
  // layer must not have overwritten what its window needs: rewind at most
  // `spare` positions behind the furthest one written.
  void Rewind(int64_t n_past) { n_past_ = n_past; }
  void Clear() { n_past_ = written_ = 0; }

 private:
  struct Layer {
    int64_t slots = 0;
    std::vector<float> k, v;         // float caches
    std::vector<uint16_t> k16, v16;  // half caches
  };
  static int64_t SlotsFor(const ModelConfig& config, int layer, int64_t capacity, int64_t spare);
  template <typename T>
  T* Row(std::vector<T>& buf, int layer, int64_t pos) {
    return buf.data() + (pos % layers_[layer].slots) * row_width_;
  }
  int64_t capacity_ = 0;
  int64_t row_width_ = 0;
  bool half_ = false;
  int64_t n_past_ = 0;
  int64_t written_ = 0;  // furthest position ever stored, plus one
  std::vector<Layer> layers_;
};

// One sequence's part of a forward step.
struct SequenceStep {
  KvCache* cache = nullptr;              // its keys/values; advanced by tokens.size()
  std::span<const int32_t> tokens;       // new tokens, at positions cache->n_past() ...
  bool all_logits = false;               // logits for every new token, not only the last
  std::vector<float>* logits = nullptr;  // out: n_vocab floats per returned position; null: none
                                         // (a prefill chunk that is not the prompt's last)
  // Instead of `logits` (left null): the same rows, not copied, in the
  // model's own buffer; valid until the model's next Forward.
  std::span<const float>* logits_view = nullptr;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;

  // Runs one step over all `steps`. Token ids and cache capacity are checked
  // first (an error leaves every cache untouched).
  virtual Status Forward(std::span<SequenceStep> steps, ThreadPool* pool) = 0;

  // A cache for a sequence of at most `capacity` positions (see KvCache for `spare`).
  std::unique_ptr<KvCache> NewCache(int64_t capacity, int64_t spare = 0) const {
    return std::make_unique<KvCache>(config(), capacity, spare);
  }
};

// Loads the model described by `file` (which must outlive the model: weights
// stay in the mapped file). Dispatches on general.architecture.
Result<std::unique_ptr<Model>> LoadModel(const GgufFile& file, const ModelOptions& options = {});

}  // namespace ragd::inference
