// Sentence embeddings from a BERT-family model folder in the
// sentence-transformers layout (all-MiniLM-L6-v2 and models of the same shape):
//   config.json                  encoder shape (see retrieval/bert.h)
//   model.safetensors            weights
//   vocab.txt                    WordPiece vocabulary
//   tokenizer_config.json        optional: do_lower_case, tokenize_chinese_chars
//   sentence_bert_config.json    optional: max_seq_length (default 256)
//   1_Pooling/config.json        optional: must ask for mean pooling if present
// An embedding is the mean of the last hidden states over all tokens of the
// text including [CLS] and [SEP], L2-normalized, so inner product = cosine.
// Texts longer than max_tokens() are truncated (the tail is not embedded);
// callers that must not lose text chunk it first (CountTokens).
//
// Thread-safety: every method is const and may be called from many threads at
// once. Forward passes run one at a time (each already uses all OpenBLAS
// threads); tokenization never waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "retrieval/bert.h"
#include "retrieval/wordpiece.h"

namespace ragd::retrieval {

struct EmbedderOptions {
  size_t max_tokens = 0;       // tokens per text with [CLS]/[SEP]; 0 = the model folder's max_seq_length
  size_t batch_tokens = 8192;  // most tokens computed in one forward pass
  bool normalize = true;       // L2-normalize the pooled vectors
  // > 0: matrix products run single-threaded (OpenBLAS's process-wide thread
  // count is set to 1 at Load) and a batch of several texts is split over this
  // many threads. A server wants this: OpenBLAS's own threads stall when the
  // cores are busy generating, and a question's embedding then waits on them
  // many times longer than it computes (figures in bench/README.md). 0:
  // OpenBLAS's own threading.
  int threads = 0;
};

// Counters of one Embed call, for benchmarks.
struct EmbedStats {
  size_t tokens = 0;  // tokens run through the encoder, [CLS]/[SEP] included
  double flops = 0;   // floating-point operations of the matrix products
};

class Embedder {
 public:
  // Loads the model folder `dir`. Errors: NotFound (missing file), Corrupt,
  // Unsupported (other activation, pooling or dtype).
  static Result<std::unique_ptr<Embedder>> Load(const std::string& dir, const EmbedderOptions& options = {});

  // One vector of dimension() floats per text, in order. Never fails on
  // content (invalid UTF-8 bytes are dropped); an empty text embeds [CLS][SEP].
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts,
                                                EmbedStats* stats = nullptr) const;
  Result<std::vector<float>> EmbedOne(std::string_view text) const;

  // Word pieces of `text`, without [CLS]/[SEP] and without truncation.
  size_t CountTokens(std::string_view text) const { return tokenizer_.CountTokens(text); }
  // Ids the model sees for `text`: [CLS] pieces [SEP], truncated to max_tokens().
  std::vector<int32_t> Encode(std::string_view text) const { return tokenizer_.Encode(text, max_tokens_); }

  const WordPieceTokenizer& tokenizer() const { return tokenizer_; }
  int dimension() const { return model_.config().hidden; }
  size_t max_tokens() const { return max_tokens_; }
  // The folder's base name, e.g. "all-MiniLM-L6-v2".
  const std::string& name() const { return name_; }

 private:
  Embedder(WordPieceTokenizer tokenizer, BertModel model)
      : tokenizer_(std::move(tokenizer)), model_(std::move(model)) {}

  EmbedderOptions options_;
  WordPieceTokenizer tokenizer_;
  BertModel model_;
  size_t max_tokens_ = 256;
  std::string name_;
  mutable std::mutex forward_mutex_;  // one forward pass at a time
};

}  // namespace ragd::retrieval
