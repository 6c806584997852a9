// Where the benchmarks find the default models when no path is given:
// $RAGD_MODELS, else ~/.cache/ragd/models (where scripts/fetch-models puts
// them). Header-only.
#pragma once

#include <cstdlib>
#include <string>

namespace ragd::bench {

inline std::string ModelsDir() {
  if (const char* m = std::getenv("RAGD_MODELS"); m != nullptr && *m != '\0') return m;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/ragd/models";
}

inline std::string GemmaModelPath() { return ModelsDir() + "/gemma-3-270m-q4_k_m.gguf"; }
inline std::string MiniLmDir() { return ModelsDir() + "/all-MiniLM-L6-v2"; }

}  // namespace ragd::bench
