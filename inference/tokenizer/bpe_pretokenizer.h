// The pre-tokenizer of byte-level BPE: splits text into the words that BPE
// merges stay within, as llama.cpp's unicode_regex_split does for a
// tokenizer.ggml.pre value. Internal to inference/tokenizer; the only user of
// PCRE2.
//
// Each pre value names a list of regexes (llama.cpp's, src/llama-vocab.cpp);
// they are applied in turn, each one to every word the previous ones left,
// and both the matches and the text between them become words (nothing is
// dropped). Each regex sees one word at a time, so a lookahead such as
// `\s+(?!\S)` ends at the word's end. llama.cpp runs the GPT-2, Llama 3 and
// Qwen2 regexes through hand-written matchers and the others through
// std::regex over text with each character's class folded to one byte; both
// give what the regex gives with llama.cpp's Unicode tables, which is what
// the PCRE2 patterns here reproduce (see kWhitespace and the class patches in
// bpe_pretokenizer.cpp).
//
// Thread-safety: immutable after Create(); Split() may be called from many
// threads at once (each call has its own match data).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::inference {

class BpePreTokenizer {
 public:
  // The pre-tokenizer llama.cpp uses for tokenizer.ggml.pre = `pre`; "" (the
  // key absent) is llama.cpp's "default", as llama.cpp does (it warns that
  // quality will suffer). kUnsupported naming `pre` for any other value ragd
  // does not implement; kInternal if PCRE2 rejects a pattern.
  static Result<std::unique_ptr<BpePreTokenizer>> Create(std::string_view pre);
  ~BpePreTokenizer();
  BpePreTokenizer(const BpePreTokenizer&) = delete;
  BpePreTokenizer& operator=(const BpePreTokenizer&) = delete;

  // Appends the words of `text`, which must be valid UTF-8 (it is not checked
  // again), to `words`: views into `text`, in order, together exactly `text`.
  // kInternal if PCRE2 fails to match (a resource limit).
  Status Split(std::string_view text, std::vector<std::string_view>* words) const;

  // llama.cpp's settings that go with the pre value:
  // a word that is a whole vocabulary piece is that one token (Llama 3);
  bool ignore_merges() const { return ignore_merges_; }
  // the default of tokenizer.ggml.add_bos_token when the key is absent.
  bool add_bos() const { return add_bos_; }

 private:
  struct Regexes;
  BpePreTokenizer() = default;

  std::unique_ptr<Regexes> regexes_;
  bool ignore_merges_ = false;
  bool add_bos_ = false;
};

}  // namespace ragd::inference
