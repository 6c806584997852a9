// The request log: metadata in plain JSON lines, content only sealed.
#include "app/ops/request_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ragd::app {
namespace {

const std::string kKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFolder(const std::string& dir) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(dir)) all += ReadAll(e.path().string());
  return all;
}

class RequestLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/reqlog_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

RequestRecord Sample(int64_t time) {
  RequestRecord r;
  r.time = time;
  r.request_id = "req-1";
  r.user_id = 7;
  r.route = "/v1/ask";
  r.status = 200;
  r.prompt_tokens = 120;
  r.completion_tokens = 30;
  r.ttft_ms = 85.5;
  r.duration_ms = 900;
  r.finish_reason = "stop";
  r.documents_cited = {3, 5};
  r.prompt = "What is the secret launch code?";
  r.answer = "The launch code is swordfish [1].";
  return r;
}

TEST_F(RequestLogTest, MetadataLineWithoutContent) {
  auto log = RequestLog::Open({.path = dir_ + "/requests.jsonl"});
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  (*log)->Write(Sample(1795000000));
  const std::string text = ReadAll(dir_ + "/requests.jsonl");
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["request_id"], "req-1");
  EXPECT_EQ(j["user_id"], 7);
  EXPECT_EQ(j["route"], "/v1/ask");
  EXPECT_EQ(j["prompt_tokens"], 120);
  EXPECT_EQ(j["completion_tokens"], 30);
  EXPECT_EQ(j["finish_reason"], "stop");
  EXPECT_EQ(j["documents_cited"], nlohmann::json({3, 5}));
  EXPECT_EQ(text.find("launch code"), std::string::npos);
  EXPECT_EQ(text.find("swordfish"), std::string::npos);
}

TEST_F(RequestLogTest, ContentIsSealedAndOpensOnlyWithTheKey) {
  auto log = RequestLog::Open({.path = dir_ + "/requests.jsonl",
                               .content_dir = dir_ + "/content",
                               .content_key_hex = kKey,
                               .retention_days = 30});
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  (*log)->Write(Sample(1795000000));
  const std::string everything = ReadAll(dir_ + "/requests.jsonl") + ReadFolder(dir_ + "/content");
  EXPECT_EQ(everything.find("launch code"), std::string::npos);
  EXPECT_EQ(everything.find("swordfish"), std::string::npos);

  std::string line;
  std::ifstream in(std::filesystem::directory_iterator(dir_ + "/content")->path());
  ASSERT_TRUE(std::getline(in, line));
  auto plain = RequestLog::OpenSealed(line, kKey);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  auto j = nlohmann::json::parse(*plain);
  EXPECT_EQ(j["prompt"], "What is the secret launch code?");
  EXPECT_EQ(j["answer"], "The launch code is swordfish [1].");

  std::string other = kKey;
  other[0] = '1';
  EXPECT_FALSE(RequestLog::OpenSealed(line, other).ok());
  std::string tampered = line;
  tampered[tampered.find("\"box\":\"") + 8] ^= 1;
  EXPECT_FALSE(RequestLog::OpenSealed(tampered, kKey).ok());
}

TEST_F(RequestLogTest, RetentionDeletesOldDays) {
  const int64_t day = 86400, now = 1795000000;
  auto log = RequestLog::Open({.path = dir_ + "/requests.jsonl",
                               .content_dir = dir_ + "/content",
                               .content_key_hex = kKey,
                               .retention_days = 3});
  ASSERT_TRUE(log.ok());
  for (int d = 0; d < 6; ++d) (*log)->Write(Sample(now - d * day));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ + "/content"), {}), 6);
  (*log)->PurgeExpired(now);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ + "/content"), {}), 3);
}

TEST_F(RequestLogTest, BadKeyIsRefused) {
  EXPECT_FALSE(
      RequestLog::Open({.path = dir_ + "/r.jsonl", .content_dir = dir_ + "/c", .content_key_hex = "abc"})
          .ok());
}

}  // namespace
}  // namespace ragd::app
