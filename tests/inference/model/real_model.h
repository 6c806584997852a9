// Locates the real Gemma 3 270M model ($RAGD_MODELS or ~/.cache/ragd/models)
// and the golden files ($RAGD_SOURCE_DIR/tests/data). Missing files make the
// test fail, never skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "inference/engine.h"
#include "tests/support/golden.h"

namespace ragd::inference::real_model {

inline std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

// The real model on 2 threads with a context of `context_length` (null, with
// a test failure, when it cannot be loaded).
inline std::unique_ptr<Engine> LoadEngine(int context_length) {
  EngineOptions o;
  o.model_path = ModelPath();
  o.threads = 2;
  o.context_length = context_length;
  auto e = Engine::Load(o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

using ragd::testing::LoadGolden;

}  // namespace ragd::inference::real_model
