// Locates the real Gemma 3 270M model ($RAGD_MODELS or ~/.cache/ragd/models)
// and the golden files ($RAGD_SOURCE_DIR/tests/data). Missing files make the
// test fail, never skip.
#pragma once

#include "tests/support/test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ragd::inference::real_model {

inline std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

inline nlohmann::json LoadGolden(const std::string& name) {
  nlohmann::json j = ragd::testing::LoadTestJson(name);
  if (j.is_discarded()) {
    ADD_FAILURE() << "missing golden file " << ragd::testing::TestDataPath(name) << " (scripts/make-golden writes it)";
    return nlohmann::json::object();
  }
  return j;
}

}  // namespace ragd::inference::real_model
