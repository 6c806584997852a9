// models.llm entries: local files and upstream pools, from the config file,
// the environment and flags, with errors that name what is wrong.
#include "app/config/llm_entry.h"

#include <gtest/gtest.h>

#include <fstream>

#include "app/config/config.h"
#include "tests/support/temp_dir.h"

namespace ragd::app {
namespace {

const char* kPool =
    R"({"id": "pool", "upstream": ["http://10.0.0.5:8080/", "https://w2:9000"], "model": "qwen",)"
    R"( "api_key_env": "KEY", "concurrency": 3, "tokenizer": "qwen.gguf", "failures_to_open": 2})";

std::string Resolve(const std::string& path) { return "/models/" + path; }

TEST(LlmEntryTest, FileEntryIsServedUnderItsName) {
  auto e = ParseLlmEntry("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", Resolve);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->id, "qwen2.5-coder-0.5b-instruct-q4_k_m");
  EXPECT_EQ(e->path, "/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  EXPECT_FALSE(e->upstream.has_value());
}

TEST(LlmEntryTest, PoolEntryReadsEveryField) {
  auto e = ParseLlmEntry(kPool, Resolve);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->id, "pool");
  EXPECT_EQ(e->path, "/models/qwen.gguf");
  ASSERT_TRUE(e->upstream.has_value());
  EXPECT_EQ(e->upstream->urls, (std::vector<std::string>{"http://10.0.0.5:8080", "https://w2:9000"}));
  EXPECT_EQ(e->upstream->model, "qwen");
  EXPECT_EQ(e->upstream->api_key_env, "KEY");
  EXPECT_EQ(e->upstream->concurrency, 3);
  EXPECT_EQ(e->upstream->failures_to_open, 2);
  EXPECT_EQ(e->upstream->health_interval_ms, UpstreamPoolConfig{}.health_interval_ms);
}

TEST(LlmEntryTest, PoolFromFileEnvironmentAndFlags) {
  const ragd::testing::TempDir dir;
  const std::string path = dir.File("llm_entry.jsonc");
  std::ofstream(path) << R"({"models": {"dir": "/m", "llm": [)" << kPool << R"(, "b.gguf"]}})";
  auto file = LoadConfig({.file = path});
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto entries = file->LlmEntries();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_TRUE((*entries)[0].upstream.has_value());
  EXPECT_EQ((*entries)[0].path, "/m/qwen.gguf");
  EXPECT_EQ((*entries)[1].id, "b");
  // Commas inside the object do not split the list.
  auto flags =
      LoadConfig({.overrides = {{"models.dir", "/m"}, {"models.llm", std::string(kPool) + ", b.gguf"}}});
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  ASSERT_EQ(flags->models.llm.size(), 2u);
  EXPECT_EQ(flags->LlmPaths(), (std::vector<std::string>{"/m/qwen.gguf", "/m/b.gguf"}));
}

struct BadPool {
  const char* name;
  const char* entry;
  const char* message;  // part of the error
};

class LlmEntryErrorTest : public ::testing::TestWithParam<BadPool> {};

TEST_P(LlmEntryErrorTest, IsRefusedNamingTheField) {
  auto e = ParseLlmEntry(GetParam().entry, Resolve);
  ASSERT_FALSE(e.ok()) << GetParam().entry;
  EXPECT_NE(e.status().message().find(GetParam().message), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("models.llm"), std::string::npos);
  auto config = LoadConfig({.overrides = {{"models.llm", GetParam().entry}}});
  EXPECT_FALSE(config.ok());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LlmEntryErrorTest,
    ::testing::Values(
        BadPool{"NoId", R"({"upstream": ["http://a"], "tokenizer": "t.gguf"})", "'id'"},
        BadPool{"NoUpstream", R"({"id": "p", "tokenizer": "t.gguf"})", "'upstream'"},
        BadPool{"EmptyUpstream", R"({"id": "p", "upstream": [], "tokenizer": "t.gguf"})", "'upstream'"},
        BadPool{"NotHttp", R"({"id": "p", "upstream": ["ftp://a"], "tokenizer": "t.gguf"})", "http://"},
        BadPool{"NoTokenizer", R"({"id": "p", "upstream": ["http://a"]})", "'tokenizer'"},
        BadPool{"ZeroConcurrency",
                R"({"id": "p", "upstream": ["http://a"], "tokenizer": "t", "concurrency": 0})",
                "'concurrency'"},
        BadPool{"UnknownField", R"({"id": "p", "upstream": ["http://a"], "tokenizer": "t", "urls": []})",
                "unknown field 'urls'"},
        BadPool{"TokenizerNotString", R"({"id": "p", "upstream": "http://a", "tokenizer": 3})",
                "'tokenizer'"},
        BadPool{"NotJson", R"({"id": "p", )", "not a JSON object"}),
    [](const ::testing::TestParamInfo<BadPool>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ragd::app
