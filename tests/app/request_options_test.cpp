// Reading the options and messages of a generation request
// (app/routes/request_options.h): a malformed body is a 400 naming the field.
#include "app/routes/request_options.h"

#include <gtest/gtest.h>

#include <string>

namespace ragd::app {
namespace {

class ContentPartType : public ::testing::TestWithParam<std::string> {};

// Found by tests/fuzz (json_options): a content part whose "type" was not a
// string threw nlohmann::json::type_error out of ReadMessages (the route's
// wrapper turned it into a 500 instead of naming the field).
TEST_P(ContentPartType, OfAnyJsonTypeIsRefusedNamingTheField) {
  auto body = ParseJsonObject(R"({"messages":[{"role":"user","content":[{"type":)" + GetParam() +
                              R"(,"text":"a"}]}]})");
  ASSERT_TRUE(body.ok());
  auto messages = ReadMessages(*body);
  ASSERT_FALSE(messages.ok());
  EXPECT_EQ(messages.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(messages.status().message().find("messages[0].content"), std::string::npos)
      << messages.status().message();
}

// "1" is the crashing input's value.
INSTANTIATE_TEST_SUITE_P(NotText, ContentPartType,
                         ::testing::Values("1", "null", "true", "[\"text\"]", "{\"text\":1}", "\"image\""));

TEST(ReadMessages, TextPartsAreJoined) {
  auto body = ParseJsonObject(
      R"({"messages":[{"role":"developer","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]})");
  ASSERT_TRUE(body.ok());
  auto messages = ReadMessages(*body);
  ASSERT_TRUE(messages.ok()) << messages.status().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ((*messages)[0].role, "system");
  EXPECT_EQ((*messages)[0].content, "ab");
}

}  // namespace
}  // namespace ragd::app
