#include "common/text.h"

#include <gtest/gtest.h>

namespace ragd {
namespace {

TEST(Utf8Test, Validity) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("ação 🙂 über"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // > U+10FFFF
}

TEST(Utf8Test, CompletePrefixHoldsBackPartialCharacter) {
  const std::string smile = "🙂";  // 4 bytes
  for (size_t cut = 1; cut < smile.size(); ++cut) {
    std::string s = "ok" + smile.substr(0, cut);
    EXPECT_EQ(CompleteUtf8Prefix(s), 2u) << cut;
  }
  EXPECT_EQ(CompleteUtf8Prefix("ok" + smile), 6u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xFF"
                               "b"),
            3u);  // invalid bytes never complete: pass them on
}

TEST(Utf8Test, RepairReplacesInvalidBytes) {
  EXPECT_EQ(RepairUtf8("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(RepairUtf8("ação"), "ação");
}

TEST(TextTest, AsciiLowerLeavesOtherBytesAlone) {
  EXPECT_EQ(AsciiLower("Content-Type: ÄB"), "content-type: Äb");
}

TEST(TextTest, Trim) {
  EXPECT_EQ(Trim("  hi \n"), "hi");
  EXPECT_EQ(Trim(" \t "), "");
}

}  // namespace
}  // namespace ragd
