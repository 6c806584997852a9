// Golden files of tests/data for GoogleTest suites. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_paths.h"

namespace ragd::testing {

// LoadTestJson for a golden file; a missing one fails the test (never skips)
// and yields an empty object.
inline nlohmann::json LoadGolden(const std::string& name) {
  nlohmann::json j = LoadTestJson(name);
  if (j.is_discarded()) {
    ADD_FAILURE() << "missing golden file " << TestDataPath(name) << " (scripts/make-golden writes it)";
    return nlohmann::json::object();
  }
  return j;
}

}  // namespace ragd::testing
