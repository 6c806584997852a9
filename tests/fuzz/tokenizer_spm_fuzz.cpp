// The SentencePiece tokenizer (inference/tokenizer/sentencepiece.cpp) with
// Gemma 3's vocabulary of 262,144 pieces; checks in tokenizer_fuzz.h.
#include <cstdint>
#include <string>

#include "tests/fuzz/tokenizer_fuzz.h"

namespace {

// A typed U+2581 (SentencePiece's escaped space) decodes as a space.
std::string Expected(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "\xE2\x96\x81") {
      out += ' ';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto tok = ragd::fuzz::LoadModelTokenizer("gemma-3-270m-q4_k_m.gguf");
  ragd::fuzz::FuzzTokenizer(*tok, data, size, &Expected);
  return 0;
}
