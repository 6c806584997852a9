// BERT-family encoder (post-LayerNorm, absolute positions, exact GELU) on
// float32 weights, computed with OpenBLAS sgemm. Internal to retrieval/;
// callers use Embedder.
//
// Reads config.json (num_hidden_layers, hidden_size, num_attention_heads,
// intermediate_size, layer_norm_eps, max_position_embeddings, vocab_size,
// type_vocab_size, hidden_act) and model.safetensors. Tensor names are those
// of transformers' BertModel, optionally prefixed with "bert."; F32, F16 and
// BF16 tensors are accepted (converted to F32 on load). Linear weights are
// [out, in], row-major.
//
// Immutable after Load(); MeanPooled() keeps its scratch per call, so
// concurrent calls are safe.
//
// Threads: a batch of several sequences (at least 128 tokens per part) is
// split over up to openblas_get_num_threads() threads, each running whole
// sequences with single-threaded sgemm; OpenBLAS's process-wide thread count
// is set to 1 for the duration of such a call and then restored (other sgemm
// callers in the process run single-threaded meanwhile). Smaller batches run on
// the calling thread with OpenBLAS's own threading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace ragd::retrieval {

struct BertConfig {
  int n_layers = 0;
  int hidden = 0;
  int heads = 0;
  int intermediate = 0;
  int max_positions = 0;
  int vocab_size = 0;
  int type_vocab_size = 0;
  float eps = 1e-12f;
};

class BertModel {
 public:
  // `dir` holds config.json and model.safetensors.
  static Result<BertModel> Load(const std::string& dir);

  const BertConfig& config() const { return config_; }

  // Runs the encoder on `batch` sequences of token ids (no padding needed;
  // longer than max_positions are cut). Returns the mean of the last hidden
  // states of each sequence's tokens (batch x hidden, row-major), not
  // normalized; an empty sequence gives zeros. `flops`, when given, is increased by the multiply-adds x 2
  // of the matrix products done.
  // Sets OpenBLAS's process-wide thread count to 1 (EmbedderOptions::threads).
  static void SingleThreadedProducts();

  // `split_threads` > 0: split a batch over that many threads whatever
  // OpenBLAS's thread count is (see EmbedderOptions::threads).
  std::vector<float> MeanPooled(const std::vector<std::vector<int32_t>>& batch, double* flops = nullptr,
                                int split_threads = 0) const;

 private:
  // Runs the sequences batch[which[i]] and adds their mean-pooled states to
  // rows which[i] of `pooled` (zeroed by the caller). Returns the flops done.
  double Forward(const std::vector<std::vector<int32_t>>& batch, const std::vector<size_t>& which,
                 float* pooled) const;

  struct Layer {
    std::vector<float> qkv_w, qkv_b;  // [3H, H], [3H]: query, key, value stacked
    std::vector<float> out_w, out_b;  // [H, H]
    std::vector<float> ln1_g, ln1_b;
    std::vector<float> ffn_up_w, ffn_up_b;      // [I, H]
    std::vector<float> ffn_down_w, ffn_down_b;  // [H, I]
    std::vector<float> ln2_g, ln2_b;
  };
  BertConfig config_;
  std::vector<float> word_emb_, pos_emb_, type_emb_, emb_ln_g_, emb_ln_b_;
  std::vector<Layer> layers_;
};

}  // namespace ragd::retrieval
