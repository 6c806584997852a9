// Locates the real Gemma 3 270M model ($RAGD_MODELS or ~/.cache/ragd/models)
// and the golden files ($RAGD_SOURCE_DIR/tests/data). Missing files make the
// test fail, never skip.
#pragma once

#include "tests/support/golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ragd::inference::real_model {

inline std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

using ragd::testing::LoadGolden;

}  // namespace ragd::inference::real_model
