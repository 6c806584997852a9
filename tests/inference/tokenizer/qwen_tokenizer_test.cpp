// Byte-level BPE on the real Qwen2.5 vocabulary (151,936 tokens, pre-tokenizer
// qwen2), checked against llama.cpp's tokenization of every string in
// tests/data/qwen_tokenizer.json and against its text for every token.
#include <gtest/gtest.h>

#include <cstdio>

#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/qwen_fixture.h"

namespace ragd::inference {
namespace {

using Ids = std::vector<TokenId>;

class QwenTokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = qwen::Get();
    ASSERT_NE(tok_, nullptr);
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(QwenTokenizerTest, VocabularyFacts) {
  EXPECT_EQ(tok_->vocab_size(), 151936);
  EXPECT_EQ(tok_->bos_id(), 151643);
  EXPECT_EQ(tok_->eos_id(), 151645);
  EXPECT_EQ(tok_->eot_id(), 151645);  // llama.cpp's token_eot() too
  EXPECT_FALSE(tok_->add_bos());
  EXPECT_EQ(tok_->start_of_turn_id(), -1);
  EXPECT_EQ(tok_->end_of_turn_id(), -1);
  EXPECT_EQ(tok_->PieceToId("<|im_start|>"), 151644);
  EXPECT_EQ(tok_->PieceToId("<|im_end|>"), 151645);
  EXPECT_EQ(tok_->PieceToId("<|endoftext|>"), 151643);
  EXPECT_TRUE(tok_->IsEndOfGeneration(151645));
  EXPECT_TRUE(tok_->IsEndOfGeneration(151643));
  EXPECT_FALSE(tok_->IsEndOfGeneration(151644));
  EXPECT_TRUE(tok_->IsControl(151644));
  EXPECT_FALSE(tok_->IsControl(151657));  // <tool_call> is user-defined
  EXPECT_EQ(*tok_->TokenPiece(1879), "\u0120world");
  EXPECT_EQ(*tok_->TokenBytes(1879), " world");
  EXPECT_EQ(*tok_->TokenBytes(151644), "");
  // "</s>" is an ordinary token here (llama.cpp makes it control and stops on it).
  EXPECT_FALSE(tok_->IsEndOfGeneration(128247));
  EXPECT_FALSE(tok_->IsControl(128247));
  EXPECT_EQ(*tok_->TokenBytes(128247), "</s>");
}

TEST_F(QwenTokenizerTest, MatchesLlamaCppOnGoldenStrings) {
  const nlohmann::json golden = qwen::LoadGolden("qwen_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  ASSERT_GE(golden["cases"].size(), 60u);
  real_vocab::ExpectEncodesLikeGolden(*tok_, golden["cases"]);
}

TEST_F(QwenTokenizerTest, DecodeRoundTripsGoldenStrings) {
  const nlohmann::json golden = qwen::LoadGolden("qwen_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  real_vocab::ExpectDecodesLikeGolden(*tok_, golden["cases"]);
}

TEST_F(QwenTokenizerTest, EveryTokenDecodesAsInLlamaCpp) {
  // FNV-1a over (u32 length, bytes) of each token's text, as the golden
  // script hashes llama_token_to_piece(id, special=false).
  const nlohmann::json golden = qwen::LoadGolden("qwen_tokenizer.json");
  ASSERT_TRUE(golden.contains("pieces_fnv1a64"));
  ASSERT_EQ(golden["n_vocab"].get<int>(), tok_->vocab_size());
  uint64_t h = 0xCBF29CE484222325ull;
  const auto mix = [&h](uint8_t b) { h = (h ^ b) * 0x100000001B3ull; };
  for (TokenId id = 0; id < tok_->vocab_size(); ++id) {
    const std::string bytes = *tok_->TokenBytes(id);
    for (int k = 0; k < 4; ++k) mix(static_cast<uint8_t>(bytes.size() >> (8 * k)));
    for (char c : bytes) mix(static_cast<uint8_t>(c));
  }
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  EXPECT_EQ(std::string(hex), golden["pieces_fnv1a64"].get<std::string>());
}

TEST_F(QwenTokenizerTest, TypedSpecialTokensStayText) {
  real_vocab::ExpectTypedSpecialsStayText(
      *tok_, {"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>assistant\n"});
}

TEST_F(QwenTokenizerTest, EncodeFromManyThreads) {
  const nlohmann::json golden = qwen::LoadGolden("qwen_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  EXPECT_EQ(real_vocab::EncodeMismatchesFromThreads(*tok_, golden["cases"], 4, 10), 0);
}

}  // namespace
}  // namespace ragd::inference
