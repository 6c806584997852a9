// The model's own tokenizer, built from the vocabulary stored in a GGUF file
// (tokenizer.ggml.* keys): SentencePiece (BPE with byte fallback; Gemma,
// tokenizer.ggml.model "llama") or byte-level BPE (GPT-2 style; Qwen2,
// Llama 3, tokenizer.ggml.model "gpt2").
//
// Encode() turns plain text into token ids WITHOUT any special tokens: text
// such as "<bos>", "<end_of_turn>" or "<|im_start|>" typed by a user is
// tokenized as ordinary characters, never as the control token. Callers that
// need BOS or turn markers insert them by id (see chat_format.h). The ids are
// those of llama.cpp's llama_tokenize(add_special=false, parse_special=false):
// the text is first split at user-defined pieces (Gemma's runs of spaces,
// Qwen's <tool_call>) matched on the raw text, then each remaining span goes
// through the model's tokenizer. SentencePiece: BPE with byte fallback, no
// dummy prefix and no whitespace folding. Byte-level BPE: the span is split
// into words by the pre-tokenizer regexes named by tokenizer.ggml.pre (see
// bpe_pretokenizer.h), each word's UTF-8 bytes are spelled in GPT-2's
// byte-to-unicode alphabet and merged by rank (tokenizer.ggml.merges).
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
class TokenizerModel;

using TokenId = int32_t;

class Tokenizer {
 public:
  // Builds the tokenizer from the GGUF vocabulary (tokens, token_type, scores
  // or merges, bos/eos/eot/unknown ids). Errors: kUnsupported when
  // tokenizer.ggml.model is neither "llama" (SentencePiece) nor "gpt2"
  // (byte-level BPE), or when a BPE vocabulary's tokenizer.ggml.pre names a
  // pre-tokenizer ragd does not implement; kCorrupt when the vocabulary is
  // inconsistent (array lengths differ, duplicate pieces, missing byte pieces,
  // a merge of pieces absent from the vocabulary, ...).
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
  // UTF-8 character for byte tokens and byte-level BPE pieces; empty for
  // control tokens).
  // kOutOfRange on an id outside the vocabulary.
  Result<std::string> TokenBytes(TokenId id) const;

  // The piece as stored in the vocabulary ("▁the", "<0x0A>", "<end_of_turn>";
  // byte-level BPE pieces in GPT-2's alphabet: "Ġthe" for " the").
  // kOutOfRange on an id outside the vocabulary.
  Result<std::string> TokenPiece(TokenId id) const;

  // Id of the piece spelled exactly `piece`, or -1 when absent.
  TokenId PieceToId(std::string_view piece) const;

  int vocab_size() const;
  TokenId bos_id() const { return bos_id_; }
  TokenId eos_id() const { return eos_id_; }
  // Whether a prompt starts with BOS: tokenizer.ggml.add_bos_token, else
  // llama.cpp's default (true for SentencePiece and Llama 3's BPE, false for
  // other BPE vocabularies such as Qwen's).
  bool add_bos() const { return add_bos_; }
  // The end-of-turn marker: tokenizer.ggml.eot_token_id, else the first of
  // <|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|> present;
  // -1 when none is.
  TokenId eot_id() const { return eot_id_; }
  // Gemma's turn markers; -1 when the vocabulary has no such piece (not a
  // Gemma chat model; Qwen's ChatML markers are found with PieceToId).
  TokenId start_of_turn_id() const { return start_of_turn_id_; }
  TokenId end_of_turn_id() const { return end_of_turn_id_; }
  // True for the ids generation stops on. SentencePiece: EOS and
  // <end_of_turn>. Byte-level BPE: EOS, eot_id() and the end pieces llama.cpp
  // knows (<|im_end|>, <|endoftext|>, <|eot_id|>, <|eom_id|>, ...) present.
  bool IsEndOfGeneration(TokenId id) const;
  // True for control tokens (never produced by Encode, produce no text).
  bool IsControl(TokenId id) const;

 private:
  explicit Tokenizer(std::unique_ptr<const TokenizerModel> model);

  std::unique_ptr<const TokenizerModel> model_;  // SentencePiece or byte-level BPE
  TokenId bos_id_ = -1;
  TokenId eos_id_ = -1;
  TokenId eot_id_ = -1;
  TokenId start_of_turn_id_ = -1;
  TokenId end_of_turn_id_ = -1;
  bool add_bos_ = true;
  std::vector<TokenId> end_of_generation_;
};

// Turns a stream of generated token ids into text deltas that never end in
// the middle of a UTF-8 character (byte-fallback tokens and byte-level BPE
// pieces can split one).
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
