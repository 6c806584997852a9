// Loads the real Gemma 3 tokenizer ($RAGD_MODELS or ~/.cache/ragd/models) and
// the golden files written by scripts/make-golden ($RAGD_SOURCE_DIR/tests/data).
// Missing files make the test fail, never skip.
#pragma once

#include "tests/support/golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference::gemma {

inline std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

// One tokenizer for the whole test binary (building it takes ~1 s).
inline const Tokenizer* Get() {
  static std::unique_ptr<Tokenizer> tok = [] {
    std::unique_ptr<Tokenizer> t;
    auto gguf = GgufFile::Open(ModelPath());
    if (!gguf.ok()) {
      ADD_FAILURE() << "cannot open the Gemma model: " << gguf.status().ToString();
      return t;
    }
    auto r = Tokenizer::FromGguf(*gguf);
    if (!r.ok()) {
      ADD_FAILURE() << "cannot build the Gemma tokenizer: " << r.status().ToString();
      return t;
    }
    return std::move(r.value());
  }();
  return tok.get();
}

using ragd::testing::LoadGolden;

}  // namespace ragd::inference::gemma
