// Configuration layering: defaults < file < environment < flags, with errors
// that name the offending key.
#include "app/config/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace ragd::app {
namespace {

using ragd::testing::SourceDir;

std::string WriteFile(const std::string& name, const std::string& text) {
  static const ragd::testing::TempDir dir;  // removed when the test process exits
  const std::string path = dir.File(name);
  std::ofstream(path) << text;
  return path;
}

void CollectKeys(const nlohmann::json& j, const std::string& prefix, std::set<std::string>* out) {
  for (auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object())
      CollectKeys(v, key, out);
    else
      out->insert(key);
  }
}

TEST(ConfigTest, DefaultFileLoadsAndDocumentsEveryKey) {
  const std::string path = SourceDir() + "/config/ragd.jsonc";
  auto c = LoadConfig({.file = path});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // The file's values equal the built-in defaults.
  Config defaults;
  EXPECT_EQ(c->server.port, defaults.server.port);
  EXPECT_EQ(c->retrieval.top_k, defaults.retrieval.top_k);
  EXPECT_EQ(c->models.llm, defaults.models.llm);

  std::ifstream in(path);
  auto j = nlohmann::json::parse(in, nullptr, false, /*ignore_comments=*/true);
  std::set<std::string> in_file;
  CollectKeys(j, "", &in_file);
  std::set<std::string> known;
  for (const ConfigField& f : ConfigFields()) known.insert(f.key);
  EXPECT_EQ(in_file, known) << "config/ragd.jsonc and ConfigFields() disagree";
}

TEST(ConfigTest, UnknownKeyIsNamed) {
  auto c = LoadConfig({.file = WriteFile("unknown.jsonc", R"({"server": {"prot": 80}})")});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("server.prot"), std::string::npos) << c.status().message();
}

TEST(ConfigTest, WrongTypeIsNamed) {
  auto c = LoadConfig({.file = WriteFile("type.jsonc", R"({"retrieval": {"top_k": "five"}})")});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("retrieval.top_k"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("integer"), std::string::npos);
}

TEST(ConfigTest, OutOfRangeIsNamed) {
  auto c = LoadConfig({.overrides = {{"server.port", "70000"}}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("server.port"), std::string::npos);
}

TEST(ConfigTest, PostgresUrlIsAUrlOrKeyValuePairsAndNeverEchoed) {
  for (const char* good : {"", "postgresql://ragd@db.example/ragd", "host=/run/postgresql dbname=ragd"}) {
    auto c = LoadConfig({.overrides = {{"storage.postgres_url", good}}});
    ASSERT_TRUE(c.ok()) << good << ": " << c.status().ToString();
    EXPECT_EQ(c->storage.postgres_url, good);
  }
  for (const char* bad : {"db.example:5432/s3cret", "postgresql://ragd:s3cret@db/ragd\n"}) {
    auto c = LoadConfig({.overrides = {{"storage.postgres_url", bad}}});
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("storage.postgres_url"), std::string::npos);
    EXPECT_EQ(c.status().message().find("s3cret"), std::string::npos) << c.status().message();
  }
}

TEST(ConfigTest, EnvironmentOverridesFileAndFlagsOverrideEnvironment) {
  const std::string file =
      WriteFile("layers.jsonc", "// comment\n{\"server\": {\"port\": 9001, \"host\": \"0.0.0.0\"}}");
  std::map<std::string, std::string> env = {{"RAGD_SERVER_PORT", "9002"}, {"RAGD_RETRIEVAL_INDEX", "hnsw"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c = LoadConfig({.file = file, .getenv = getenv});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.port, 9002);
  EXPECT_EQ(c->server.host, "0.0.0.0");
  EXPECT_EQ(c->retrieval.index, "hnsw");

  auto c2 = LoadConfig({.file = file, .getenv = getenv, .overrides = {{"server.port", "9003"}}});
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->server.port, 9003);
}

TEST(ConfigTest, BadEnvironmentValueNamesTheVariable) {
  auto getenv = [](const char* name) -> const char* {
    return std::string(name) == "RAGD_INFERENCE_THREADS" ? "many" : nullptr;
  };
  auto c = LoadConfig({.getenv = getenv});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("RAGD_INFERENCE_THREADS"), std::string::npos);
}

TEST(ConfigTest, ModelPathsResolveAgainstModelsDir) {
  auto c = LoadConfig({.overrides = {{"models.dir", "/models"}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->LlmPath(), "/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf");
  EXPECT_EQ(c->LlmPaths(), (std::vector<std::string>{"/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                                                     "/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"}));
  EXPECT_EQ(c->EmbeddingPath(), "/models/all-MiniLM-L6-v2");
  auto abs = LoadConfig({.overrides = {{"models.llm", "/elsewhere/m.gguf"}}});
  EXPECT_EQ(abs->LlmPath(), "/elsewhere/m.gguf");
  EXPECT_EQ(abs->LlmPaths().size(), 1u);
}

TEST(ConfigTest, ModelListsFromFileEnvironmentAndFlags) {
  auto file = LoadConfig({.file = WriteFile("list.jsonc", R"({"models": {"llm": ["a.gguf", "b.gguf"]}})")});
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->models.llm, (std::vector<std::string>{"a.gguf", "b.gguf"}));
  auto one = LoadConfig({.file = WriteFile("one.jsonc", R"({"models": {"llm": "a.gguf"}})")});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->models.llm, std::vector<std::string>{"a.gguf"});
  auto flags = LoadConfig({.overrides = {{"models.llm", " a.gguf, b.gguf ,c.gguf"}}});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->models.llm, (std::vector<std::string>{"a.gguf", "b.gguf", "c.gguf"}));

  auto bad = LoadConfig({.file = WriteFile("bad.jsonc", R"({"models": {"llm": ["a.gguf", 3]}})")});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("models.llm"), std::string::npos);
  auto empty = LoadConfig({.overrides = {{"models.llm", ""}}});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("at least one"), std::string::npos);
  auto templ = LoadConfig({.overrides = {{"models.chat_templates", "chatml"}}});
  ASSERT_FALSE(templ.ok());
  EXPECT_NE(templ.status().message().find("<model id>=<template>"), std::string::npos);
}

}  // namespace
}  // namespace ragd::app
