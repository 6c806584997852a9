// Where retrieval tests find the real embedding model: $RAGD_MODELS or
// ~/.cache/ragd/models. Tests that need it fail (never skip) when it is absent.
#pragma once

#include <cstdlib>
#include <string>

namespace ragd::retrieval::testing {

inline std::string ModelsDir() {
  if (const char* env = std::getenv("RAGD_MODELS"); env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.cache/ragd/models";
}

inline std::string MiniLmDir() { return ModelsDir() + "/all-MiniLM-L6-v2"; }

inline std::string SourceDir() {
  const char* env = std::getenv("RAGD_SOURCE_DIR");
  return env != nullptr ? env : ".";
}

}  // namespace ragd::retrieval::testing
