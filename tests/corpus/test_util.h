// Helpers shared by the corpus tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ragd::corpus::testing {

// A fresh directory removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ragd-corpus-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

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
