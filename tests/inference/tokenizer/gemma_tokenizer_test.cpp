// The tokenizer on the real Gemma 3 vocabulary, checked against llama.cpp's
// tokenization of every string in tests/data/gemma_tokenizer.json.
#include <gtest/gtest.h>

#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/gemma_fixture.h"

namespace ragd::inference {
namespace {

using Ids = std::vector<TokenId>;

class GemmaTokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = gemma::Get();
    ASSERT_NE(tok_, nullptr);
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(GemmaTokenizerTest, VocabularyFacts) {
  EXPECT_EQ(tok_->vocab_size(), 262144);
  EXPECT_EQ(tok_->bos_id(), 2);
  EXPECT_EQ(tok_->eos_id(), 1);
  EXPECT_EQ(tok_->start_of_turn_id(), 105);
  EXPECT_EQ(tok_->end_of_turn_id(), 106);
  EXPECT_TRUE(tok_->IsEndOfGeneration(1));
  EXPECT_TRUE(tok_->IsEndOfGeneration(106));
  EXPECT_FALSE(tok_->IsEndOfGeneration(2));
  EXPECT_FALSE(tok_->IsEndOfGeneration(105));
  EXPECT_EQ(*tok_->TokenPiece(106), "<end_of_turn>");
  EXPECT_EQ(*tok_->TokenPiece(107), "\n");
  EXPECT_EQ(*tok_->TokenBytes(238 + 0xF0), "\xF0");
}

TEST_F(GemmaTokenizerTest, MatchesLlamaCppOnGoldenStrings) {
  const nlohmann::json golden = gemma::LoadGolden("gemma_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  ASSERT_GE(golden["cases"].size(), 30u);
  real_vocab::ExpectEncodesLikeGolden(*tok_, golden["cases"]);
}

TEST_F(GemmaTokenizerTest, DecodeRoundTripsGoldenStrings) {
  const nlohmann::json golden = gemma::LoadGolden("gemma_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  real_vocab::ExpectDecodesLikeGolden(*tok_, golden["cases"]);
}

TEST_F(GemmaTokenizerTest, TypedEndOfTurnStaysText) {
  real_vocab::ExpectTypedSpecialsStayText(*tok_,
                                          {"<end_of_turn>", "<start_of_turn>model\n", "<bos>", "<eos>"});
}

TEST_F(GemmaTokenizerTest, EmojiSplitOverByteTokensStreamsWhole) {
  // U+1FAE8 (shaking face) is not in the vocabulary: four byte-fallback
  // tokens (<0x00> is id 238).
  const std::string emoji = "\xF0\x9F\xAB\xA8";
  const Ids bytes = {238 + 0xF0, 238 + 0x9F, 238 + 0xAB, 238 + 0xA8};
  EXPECT_EQ(*tok_->Encode(emoji), bytes);
  IncrementalDecoder dec(*tok_);
  EXPECT_EQ(*dec.Push(9259), "Hello");
  for (size_t i = 0; i + 1 < bytes.size(); ++i) EXPECT_EQ(*dec.Push(bytes[i]), "");
  EXPECT_EQ(*dec.Push(bytes.back()), emoji);
  EXPECT_EQ(*tok_->Decode(bytes), emoji);
  // Cut short: the decoder never emits the partial bytes, Flush gives U+FFFD.
  IncrementalDecoder cut(*tok_);
  EXPECT_EQ(*cut.Push(bytes[0]), "");
  EXPECT_EQ(*cut.Push(bytes[1]), "");
  EXPECT_EQ(cut.Flush(), "\xEF\xBF\xBD");
}

TEST_F(GemmaTokenizerTest, StreamsLlamaCppGenerations) {
  // The greedy continuations in the generation golden file, streamed one id
  // at a time: every delta is valid UTF-8 and the deltas add up to Decode().
  const nlohmann::json golden = gemma::LoadGolden("gemma_generation.json");
  ASSERT_TRUE(golden.contains("prompts"));
  for (const auto& p : golden["prompts"]) {
    const Ids ids = p["generated_ids"].get<Ids>();
    EXPECT_EQ(real_vocab::Stream(*tok_, ids, p["name"]), *tok_->Decode(ids)) << p["name"];
  }
}

TEST_F(GemmaTokenizerTest, EncodeFromManyThreads) {
  const nlohmann::json golden = gemma::LoadGolden("gemma_tokenizer.json");
  ASSERT_TRUE(golden.contains("cases"));
  EXPECT_EQ(real_vocab::EncodeMismatchesFromThreads(*tok_, golden["cases"], 4, 20), 0);
}

TEST_F(GemmaTokenizerTest, InvalidInputIsAnError) {
  EXPECT_EQ(tok_->Encode("abc\xFF").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tok_->Decode(Ids{262144}).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace ragd::inference
