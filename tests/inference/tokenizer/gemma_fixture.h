// Loads the real Gemma 3 tokenizer ($RAGD_MODELS or ~/.cache/ragd/models) and
// the golden files written by scripts/make-golden ($RAGD_SOURCE_DIR/tests/data).
// Missing files make the test fail, never skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/real_vocab.h"
#include "tests/support/golden.h"

namespace ragd::inference::gemma {

inline std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

// One tokenizer for the whole test binary (building it takes ~1 s).
inline const Tokenizer* Get() {
  static const std::unique_ptr<Tokenizer> tok = real_vocab::Load(ModelPath(), "Gemma");
  return tok.get();
}

using ragd::testing::LoadGolden;

}  // namespace ragd::inference::gemma
