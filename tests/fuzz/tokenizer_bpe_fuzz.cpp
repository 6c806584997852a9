// The byte-level BPE tokenizer (inference/tokenizer/bpe.cpp and its
// pre-tokenizer regexes) with Qwen2.5-Coder's vocabulary, the answer models'
// tokenizer; checks in tokenizer_fuzz.h.
#include <cstdint>
#include <string>

#include "tests/fuzz/tokenizer_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto tok = ragd::fuzz::LoadModelTokenizer("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  // Byte-level BPE is lossless.
  ragd::fuzz::FuzzTokenizer(*tok, data, size, [](std::string_view text) { return std::string(text); });
  return 0;
}
