// A model loaded for a test, with a short context. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "inference/engine.h"

namespace ragd::testing {

// The engine of the GGUF file at `path`, or null after a test failure.
inline std::unique_ptr<inference::Engine> LoadTestEngine(const std::string& path, int context_length) {
  inference::EngineOptions options;
  options.model_path = path;
  options.context_length = context_length;
  auto engine = inference::Engine::Load(options);
  EXPECT_TRUE(engine.ok()) << path << ": " << engine.status().ToString();
  return engine.ok() ? std::move(engine).value() : nullptr;
}

}  // namespace ragd::testing
