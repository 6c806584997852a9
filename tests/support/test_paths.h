// Where tests find the real models and the committed test data. Header-only.
//   models: $RAGD_MODELS, else ~/.cache/ragd/models (scripts/fetch-models)
//   data:   $RAGD_SOURCE_DIR/tests/data (CTest sets RAGD_SOURCE_DIR)
// Tests that need a missing file fail; they never skip.
#pragma once

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ragd::testing {

inline std::string ModelsDir() {
  if (const char* m = std::getenv("RAGD_MODELS"); m != nullptr && *m != '\0') return m;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/ragd/models";
}

inline std::string GemmaModelPath() { return ModelsDir() + "/gemma-3-270m-q4_k_m.gguf"; }
// The answer models: size "0.5b" (fast) or "1.5b" (quality).
inline std::string QwenModelPath(const std::string& size) {
  return ModelsDir() + "/qwen2.5-coder-" + size + "-instruct-q4_k_m.gguf";
}

inline std::string SourceDir() {
  const char* src = std::getenv("RAGD_SOURCE_DIR");
  return src != nullptr && *src != '\0' ? src : ".";
}

inline std::string TestDataPath(const std::string& name) { return SourceDir() + "/tests/data/" + name; }

// Parses tests/data/<name>; a discarded value (is_discarded()) when missing or malformed.
inline nlohmann::json LoadTestJson(const std::string& name) {
  std::ifstream in(TestDataPath(name));
  if (!in) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace ragd::testing
