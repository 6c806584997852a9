// Where retrieval tests find the real embedding model: $RAGD_MODELS or
// ~/.cache/ragd/models. Tests that need it fail (never skip) when it is absent.
#pragma once

#include <string>

#include "tests/support/test_paths.h"

namespace ragd::retrieval::testing {

using ragd::testing::ModelsDir;
using ragd::testing::SourceDir;

inline std::string MiniLmDir() { return ModelsDir() + "/all-MiniLM-L6-v2"; }

}  // namespace ragd::retrieval::testing
