// The vocabulary-specific half of a Tokenizer, internal to inference/tokenizer:
// SentencePiece (sentencepiece.cpp, tokenizer.ggml.model "llama") or
// byte-level BPE (bpe.cpp, "gpt2"). tokenizer.cpp picks one by the model name
// and keeps the ids every model shares (BOS, EOS, end of turn).
//
// Thread-safety: a TokenizerModel is immutable once loaded; every method may
// be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/spm_proto.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

class GgufFile;

// tokenizer.ggml.token_type values: SentencePiece's piece types, whose
// numbers GGUF (llama.cpp's llama_token_type) uses.
using TokenType = spm::PieceType;

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  virtual int size() const = 0;
  // Ids of `text`, which the caller has checked is valid UTF-8.
  virtual Result<std::vector<TokenId>> Encode(std::string_view text) const = 0;
  // Appends the raw bytes token `id` (in range) contributes to decoded text.
  virtual void AppendBytes(TokenId id, std::string* out) const = 0;
  // The piece of `id` (in range) as stored in the GGUF.
  virtual std::string_view Piece(TokenId id) const = 0;
  // Id of the piece spelled exactly `piece`, or -1.
  virtual TokenId PieceToId(std::string_view piece) const = 0;
  // Type of `id` (in range).
  virtual TokenType Type(TokenId id) const = 0;
};

// Special ids read beside the vocabulary; -1 when absent.
struct SpecialTokens {
  TokenId bos = -1;
  TokenId eos = -1;
  TokenId eot = -1;  // end of turn (ChatML <|im_end|>, Llama 3 <|eot_id|>, Gemma <end_of_turn>)
  bool add_bos = true;
  std::vector<TokenId> end_of_generation;  // generation stops on any of these
};

struct LoadedModel {
  std::unique_ptr<const TokenizerModel> model;
  SpecialTokens special;
};

// Builders, one per tokenizer.ggml.model; the error values are described on
// Tokenizer::FromGguf.
Result<LoadedModel> LoadSentencePiece(const GgufFile& gguf);
Result<LoadedModel> LoadBytePairEncoding(const GgufFile& gguf);

// tokenizer.ggml.eot_token_id when valid, else the first end-of-turn piece
// llama.cpp knows by name that `model` has; -1 when none.
TokenId FindEndOfTurn(const GgufFile& gguf, const TokenizerModel& model);

// User-defined pieces (raw text, id) sorted longest first, then by id: the
// order in which llama.cpp matches them.
using UserDefinedPieces = std::vector<std::pair<std::string, TokenId>>;
void SortUserDefined(UserDefinedPieces* pieces);

// A span of Encode's input: raw text (id < 0) or one user-defined token.
struct Fragment {
  size_t begin;
  size_t size;
  TokenId id;
};

// Splits `text` at user-defined pieces exactly as llama.cpp's
// tokenizer_st_partition does with parse_special = false: longest piece
// first, every occurrence in the remaining raw fragments, left to right.
std::vector<Fragment> SplitUserDefined(std::string_view text, const UserDefinedPieces& pieces);

}  // namespace ragd::inference
