// Locates the real Gemma 3 270M model ($RAGD_MODELS or ~/.cache/ragd/models)
// and the golden files ($RAGD_SOURCE_DIR/tests/data). Missing files make the
// test fail, never skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ragd::inference::real_model {

inline std::string ModelPath() {
  const char* dir = std::getenv("RAGD_MODELS");
  const char* home = std::getenv("HOME");
  const std::string base =
      dir != nullptr && *dir != '\0' ? dir : std::string(home ? home : "") + "/.cache/ragd/models";
  return base + "/gemma-3-270m-q4_k_m.gguf";
}

inline nlohmann::json LoadGolden(const std::string& name) {
  const char* src = std::getenv("RAGD_SOURCE_DIR");
  const std::string path = std::string(src != nullptr ? src : ".") + "/tests/data/" + name;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "missing golden file " << path << " (scripts/make-golden writes it)";
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace ragd::inference::real_model
