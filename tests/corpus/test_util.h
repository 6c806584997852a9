// Helpers shared by the corpus tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "corpus/sha256.h"
#include "corpus/store.h"
#include "tests/support/postgres.h"
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

// A document of one chunk per (heading, text), the texts separated by blank
// lines; each chunk's embedding is {1, ordinal} when `embed`, else none.
inline NewDocument DocumentOf(const std::string& title,
                              const std::vector<std::pair<std::string, std::string>>& chunks,
                              bool embed = false) {
  NewDocument doc;
  doc.title = title;
  doc.source_name = title;
  doc.media_type = "text/plain";
  for (const auto& [heading, text] : chunks) {
    NewChunk c;
    c.start = static_cast<int64_t>(doc.text.size());
    doc.text += text;
    c.end = static_cast<int64_t>(doc.text.size());
    doc.text += "\n\n";
    c.text = text;
    c.heading_context = heading;
    if (embed) c.embedding = {1.0f, static_cast<float>(doc.chunks.size())};
    doc.chunks.push_back(c);
  }
  doc.byte_size = static_cast<int64_t>(doc.text.size());
  doc.sha256 = Sha256Hex(doc.text);
  return doc;
}

// A store suite run once per engine: TEST_P(Suite, Name) with `class Suite :
// public EngineTest {};` and RAGD_ON_BOTH_ENGINES(Suite). Test names end in
// /sqlite or /postgres.
class EngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool postgres() const { return GetParam() == "postgres"; }
  // This test's store: the same one on every call (reopening finds the
  // data), empty at the start of the test.
  const StoreOptions& Options() {
    if (!made_) {
      made_ = true;
      if (postgres()) {
        options_.postgres_url = ragd::testing::FreshPostgresSchema();
        EXPECT_FALSE(options_.postgres_url.empty()) << "no test PostgreSQL";
      } else {
        options_.path = dir_.File("corpus.db");
      }
    }
    return options_;
  }
  std::unique_ptr<Store> OpenStore() {
    auto store = Store::Open(Options());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;

 private:
  bool made_ = false;
  StoreOptions options_;
};

#define RAGD_ON_BOTH_ENGINES(Suite)                                                                    \
  INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::Values(std::string("sqlite"), std::string("postgres")), \
                           [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })

}  // namespace ragd::corpus::testing
