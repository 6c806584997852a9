// Helpers shared by the corpus tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace ragd::corpus::testing {

using ragd::testing::TempDir;

// Bytes of tests/data/corpus/<name>; fails the test when missing.
inline std::string ReadFixture(const std::string& name) {
  const char* root = std::getenv("RAGD_SOURCE_DIR");
  const std::filesystem::path dir = std::filesystem::path(root != nullptr ? root : ".") / "tests/data/corpus";
  std::ifstream in(dir / name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << (dir / name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace ragd::corpus::testing
