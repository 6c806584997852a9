// WordPiece tokenizer for BERT-family embedding models (BertTokenizer rules).
//
// Steps, in order: clean (drop NUL, U+FFFD and control characters, map
// whitespace to ' '), put spaces around CJK ideographs, split on whitespace,
// NFD + drop nonspacing marks + lowercase (when `lowercase`), split off every
// punctuation character, then greedy longest-match-first WordPiece with the
// "##" continuation prefix; a word longer than `max_chars_per_word` characters
// or one that cannot be matched becomes a single [UNK].
//
// vocab.txt, parsed here: one token per line, the 0-based line number is the
// id; only the trailing "\n" (and a "\r" before it) is stripped.
//
// Immutable after Load(); every method is const and safe from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace ragd::retrieval {

struct WordPieceOptions {
  bool lowercase = true;            // lowercase and strip accents (uncased models)
  bool split_cjk = true;            // put spaces around CJK ideographs
  size_t max_chars_per_word = 100;  // longer words become [UNK]
};

// One word piece and the bytes [begin, end) of the original text it came from.
struct TokenSpan {
  int32_t id = 0;
  size_t begin = 0;
  size_t end = 0;
};

class WordPieceTokenizer {
 public:
  static Result<WordPieceTokenizer> Load(const std::string& vocab_path, const WordPieceOptions& options = {});
  // Builds from tokens in id order (tests). Requires [UNK], [CLS], [SEP], [PAD].
  static Result<WordPieceTokenizer> FromTokens(std::vector<std::string> tokens,
                                               const WordPieceOptions& options = {});

  // Word pieces of `text` without [CLS]/[SEP], with their source byte spans.
  // Invalid UTF-8 bytes are treated as U+FFFD (and therefore dropped).
  std::vector<TokenSpan> Tokenize(std::string_view text) const;
  // [CLS] pieces [SEP], keeping at most `max_length` ids in all (>= 2): the
  // pieces are cut at the end, [SEP] is always last.
  std::vector<int32_t> Encode(std::string_view text, size_t max_length) const;
  // Number of word pieces, without [CLS]/[SEP].
  size_t CountTokens(std::string_view text) const { return Tokenize(text).size(); }

  size_t vocab_size() const { return tokens_.size(); }
  const std::string& TokenText(int32_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  int32_t unk_id() const { return unk_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }

 private:
  struct Char {
    char32_t cp;
    size_t begin, end;  // source bytes
  };
  void PieceWord(const std::vector<Char>& word, std::vector<TokenSpan>& out) const;
  int32_t Lookup(const std::string& piece) const;

  WordPieceOptions options_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t unk_id_ = 0, cls_id_ = 0, sep_id_ = 0, pad_id_ = 0;
};

}  // namespace ragd::retrieval
