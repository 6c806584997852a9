// Where the pages come from when server.web_dir is empty (app/server/web_dir.h):
// beside an installed binary, or the source tree for a binary of this build.
#include "app/server/web_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

namespace fs = std::filesystem;

TEST(WebDir, BinaryOfThisBuildServesTheSourceTree) {
  // RAGD_TEST_BINARY: <build>/ragd, with no share/ragd/web beside it.
  EXPECT_EQ(fs::path(DefaultWebDirFor(RAGD_TEST_BINARY)), fs::path(ragd::testing::SourceDir()) / "web");
}

TEST(WebDir, InstalledBinaryServesThePagesBesideIt) {
  ragd::testing::TempDir prefix;
  fs::create_directories(fs::path(prefix.path()) / "share/ragd/web");
  EXPECT_EQ(DefaultWebDirFor(prefix.File("bin/ragd")), prefix.File("share/ragd/web"));
}

TEST(WebDir, InstalledBinaryNeverFallsBackToTheSourceTree) {
  ragd::testing::TempDir prefix;  // the pages were not installed
  EXPECT_EQ(DefaultWebDirFor(prefix.File("bin/ragd")), prefix.File("share/ragd/web"));
}

}  // namespace
}  // namespace ragd::app
