// Loads the real Qwen2.5-Coder 0.5B tokenizer ($RAGD_MODELS or
// ~/.cache/ragd/models) and the golden file written by scripts/make-bpe-golden
// ($RAGD_SOURCE_DIR/tests/data). Missing files make the test fail, never skip.
#pragma once

#include <memory>
#include <string>

#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/real_vocab.h"
#include "tests/support/golden.h"

namespace ragd::inference::qwen {

inline std::string ModelPath() { return ragd::testing::QwenModelPath("0.5b"); }

// One tokenizer for the whole test binary.
inline const Tokenizer* Get() {
  static const std::unique_ptr<Tokenizer> tok = real_vocab::Load(ModelPath(), "Qwen");
  return tok.get();
}

using ragd::testing::LoadGolden;

}  // namespace ragd::inference::qwen
