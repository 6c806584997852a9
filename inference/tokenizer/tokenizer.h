// The model's own tokenizer: SentencePiece (BPE with byte fallback) built from
// the vocabulary stored in a GGUF file (tokenizer.ggml.* keys).
//
// Encode() turns plain text into token ids WITHOUT any special tokens: text
// such as "<bos>" or "<end_of_turn>" typed by a user is tokenized as ordinary
// characters, never as the control token. Callers that need BOS or turn
// markers insert them by id (see chat_format.h). The ids are those of
// llama.cpp's llama_tokenize(add_special=false, parse_special=false): the text
// is first split at user-defined pieces (runs of spaces, tabs and newlines)
// matched on the raw text, then each remaining span goes through SentencePiece
// BPE with byte fallback, no dummy prefix and no whitespace folding.
//
// Thread-safety: a Tokenizer is immutable after FromGguf(); every const method
// may be called from many threads at once. It does not keep a reference to the
// GgufFile it was built from. An IncrementalDecoder is per-stream state: use
// one per request, from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::inference {

class GgufFile;

using TokenId = int32_t;

class Tokenizer {
 public:
  // Builds the tokenizer from the GGUF vocabulary (tokens, scores, token_type,
  // bos/eos/unknown ids). Errors: kUnsupported when tokenizer.ggml.model is
  // not "llama" (SentencePiece), kCorrupt when the vocabulary is inconsistent
  // (array lengths differ, duplicate pieces, missing byte pieces, ...).
  static Result<std::unique_ptr<Tokenizer>> FromGguf(const GgufFile& gguf);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Token ids of `text`, no BOS/EOS, no special-token parsing. The empty
  // string gives no tokens. kInvalidArgument when `text` is not valid UTF-8.
  Result<std::vector<TokenId>> Encode(std::string_view text) const;

  // Text of `ids`. Control tokens (BOS, EOS, turn markers, ...) produce no
  // text; byte-fallback tokens are joined into characters; bytes that do not
  // form valid UTF-8 become U+FFFD. kOutOfRange on an id outside the vocabulary.
  Result<std::string> Decode(std::span<const TokenId> ids) const;

  // The raw bytes one token contributes to decoded text (may be a partial
  // UTF-8 character for byte tokens; empty for control tokens).
  // kOutOfRange on an id outside the vocabulary.
  Result<std::string> TokenBytes(TokenId id) const;

  // The piece as stored in the vocabulary ("▁the", "<0x0A>", "<end_of_turn>").
  // kOutOfRange on an id outside the vocabulary.
  Result<std::string> TokenPiece(TokenId id) const;

  // Id of the piece spelled exactly `piece`, or -1 when absent.
  TokenId PieceToId(std::string_view piece) const;

  int vocab_size() const;
  TokenId bos_id() const { return bos_id_; }
  TokenId eos_id() const { return eos_id_; }
  // -1 when the vocabulary has no such piece (not a chat model).
  TokenId start_of_turn_id() const { return start_of_turn_id_; }
  TokenId end_of_turn_id() const { return end_of_turn_id_; }
  // True for EOS and <end_of_turn>: generation stops on either.
  bool IsEndOfGeneration(TokenId id) const;
  // True for control tokens (never produced by Encode, produce no text).
  bool IsControl(TokenId id) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  TokenId bos_id_ = -1;
  TokenId eos_id_ = -1;
  TokenId start_of_turn_id_ = -1;
  TokenId end_of_turn_id_ = -1;
};

// Turns a stream of generated token ids into text deltas that never end in
// the middle of a UTF-8 character (byte-fallback tokens can split one).
// Keeps a reference to `tokenizer`, which must outlive it.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // Text completed by `id`, possibly empty (incomplete character held back).
  // kOutOfRange on an id outside the vocabulary (the state is unchanged).
  Result<std::string> Push(TokenId id);

  // Call at the end of the stream: "" when nothing is held back, else one
  // U+FFFD for the character cut short. The decoder is then empty and reusable.
  std::string Flush();

  // Bytes currently held back (at most 3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;
};

}  // namespace ragd::inference
