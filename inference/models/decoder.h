// What every decoder-only architecture shares: the step's bookkeeping (checks,
// embedding look-up, per-row positions), the attention of one layer over the
// step's sequences, the final norm and output projection, and packing the
// weight matrices for the active kernels. An architecture derives from
// Decoder, loads its own weights and writes its own Layer().
//
// Internal to inference/models/; the same thread-safety as Model.
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/gguf.h"
#include "inference/models/model.h"

namespace ragd::inference {

// From this many rows on, element-wise work (norms, RoPE, activations) is
// split over the pool; below, one thread does it (the pool's wake-up costs
// more than the work).
inline constexpr int64_t kParallelRows = 2;

// Activations of one step, sized for its total number of new tokens. The
// attention's buffers (q, k, v, attn) and the feed-forward's (gate, up) are
// never live at once: they share one allocation, the larger of the two.
struct DecoderScratch {
  std::vector<float> x, h, o, out_rows, logits;
  std::vector<float> phase;        // q, k, v, attn, then gate, up
  std::vector<uint16_t> k16, v16;  // k and v as halves, for half caches
  std::vector<int64_t> pos;        // each row's position in its sequence
  float *q = nullptr, *k = nullptr, *v = nullptr, *attn = nullptr, *gate = nullptr, *up = nullptr;
  void Resize(const ModelConfig& c, int64_t m);
};

class Decoder : public Model {
 public:
  const ModelConfig& config() const override { return config_; }
  Status Forward(std::span<SequenceStep> steps, ThreadPool* pool) final;

 protected:
  // One transformer block over the step's m rows: reads and updates s_.x.
  virtual void Layer(int il, std::span<SequenceStep> steps, int64_t m, ThreadPool* pool) = 0;

  // Reads the hyper-parameters every architecture has ("<arch>.*" keys:
  // widths, heads, context, RMS epsilon, key/value length) into config_.
  Status LoadCommonConfig(const GgufFile& file, std::string_view arch);
  // Reads token_embd (which sets n_vocab) and output_norm, and the output
  // projection: output.weight when present, else the token embedding (tied).
  // `allow_separate_output` false makes a present output.weight an error.
  Status LoadEmbeddingAndOutput(const GgufFile& file, bool allow_separate_output);
  // Re-lays the matrices out for the active kernels (kernels.h PackWeight),
  // dropping the file pages they were read from; the output projection too.
  void PackMatrices(const GgufFile& file, std::vector<WeightView*> matrices);

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
                ThreadPool* pool) const;
  // After an architecture has normalized and rotated row r's q and k: scales
  // q by config_.attention_scale and, for a half cache, rounds q and stores
  // k and v as halves (as llama.cpp's F16 cache sees them). With half
  // attention the scale goes where llama.cpp applies it: on q itself before
  // the rounding (Gemma 3), or on the scores, in the softmax (Llama, Qwen:
  // scale_before_half_ false, config_.score_scale set).
  void FinishQkvRow(int64_t r);
  // Causal attention of layer il over every sequence of the step (q, k, v
  // in s_, result in s_.attn), then the step's keys and values into the caches.
  void AttendLayer(int il, std::span<SequenceStep> steps, int64_t window, ThreadPool* pool);

  ModelConfig config_;
  float embd_scale_ = 1.f;         // multiplies each embedding row (Gemma: sqrt(n_embd))
  bool scale_before_half_ = true;  // see FinishQkvRow
  WeightView token_embd_;
  WeightView output_;  // output.weight, when the model has its own
  bool tied_output_ = true;
  const float* output_norm_ = nullptr;
  DecoderScratch s_;

 private:
  void Pack(const GgufFile& file, WeightView* w);
  WeightView& output() { return tied_output_ ? token_embd_ : output_; }

  // The packed weights' bytes: one arena in huge pages, so that the layer
  // matrices (under 2 MiB each) share them too. Declared before packed_,
  // which it must outlive.
  std::unique_ptr<std::pmr::monotonic_buffer_resource> packed_memory_;
  std::vector<PackedWeightPtr> packed_;  // what the views' `packed` point to
};

}  // namespace ragd::inference
