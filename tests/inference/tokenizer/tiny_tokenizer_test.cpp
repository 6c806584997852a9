// The tokenizer on a tiny vocabulary built by the test (no model file needed):
// BPE merges, user-defined pieces, byte fallback, control tokens as text,
// decoding, incremental decoding, and vocabulary validation.
#include <gtest/gtest.h>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/tiny_vocab.h"

namespace ragd::inference {
namespace {

using tiny::Id;
using Ids = std::vector<TokenId>;

class TinyTokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = tiny::MakeTokenizer();
    ASSERT_NE(tok_, nullptr);
  }
  Ids Encode(const std::string& text) {
    auto r = tok_->Encode(text);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Ids{};
  }
  std::unique_ptr<Tokenizer> tok_;
};

TEST_F(TinyTokenizerTest, SpecialIds) {
  EXPECT_EQ(tok_->bos_id(), tiny::kBos);
  EXPECT_EQ(tok_->eos_id(), tiny::kEos);
  EXPECT_EQ(tok_->start_of_turn_id(), tiny::kSot);
  EXPECT_EQ(tok_->end_of_turn_id(), tiny::kEot);
  EXPECT_TRUE(tok_->IsEndOfGeneration(tiny::kEos));
  EXPECT_TRUE(tok_->IsEndOfGeneration(tiny::kEot));
  EXPECT_FALSE(tok_->IsEndOfGeneration(tiny::kBos));
  EXPECT_FALSE(tok_->IsEndOfGeneration(Id("hello")));
  EXPECT_TRUE(tok_->IsControl(tiny::kSot));
  EXPECT_FALSE(tok_->IsControl(tiny::kNewline));
  EXPECT_EQ(tok_->vocab_size(), tiny::kFirstNormal + static_cast<int>(tiny::NormalPieces().size()));
  EXPECT_EQ(tok_->PieceToId("<end_of_turn>"), tiny::kEot);
  EXPECT_EQ(tok_->PieceToId("  "), tiny::kTwoSpaces);
  EXPECT_EQ(tok_->PieceToId("\xE2\x96\x81world"), Id("\xE2\x96\x81world"));
  EXPECT_EQ(tok_->PieceToId("nope"), -1);
  EXPECT_EQ(*tok_->TokenPiece(tiny::kFirstByte + 0x0A), "<0x0A>");
}

TEST_F(TinyTokenizerTest, BpeMergesByScore) {
  EXPECT_EQ(Encode("hello world"), (Ids{Id("hello"), Id("\xE2\x96\x81world")}));
  EXPECT_EQ(Encode("hello hello"), (Ids{Id("hello"), Id("\xE2\x96\x81hello")}));
  EXPECT_EQ(Encode("model"), (Ids{Id("model")}));
  EXPECT_EQ(Encode(""), Ids{});
}

TEST_F(TinyTokenizerTest, NoDummyPrefixAndSpacesKept) {
  // A leading space is its own "▁" (no dummy prefix is added or removed).
  EXPECT_EQ(Encode(" hello"), (Ids{Id("\xE2\x96\x81hello")}));
  EXPECT_EQ(Encode("hello "), (Ids{Id("hello"), Id("\xE2\x96\x81")}));
}

TEST_F(TinyTokenizerTest, UserDefinedPiecesAreAtomic) {
  EXPECT_EQ(Encode("a  b"), (Ids{Id("a"), tiny::kTwoSpaces, Id("b")}));
  EXPECT_EQ(Encode("a\n\nb"), (Ids{Id("a"), tiny::kNewline, tiny::kNewline, Id("b")}));
  EXPECT_EQ(Encode("   x"), (Ids{tiny::kTwoSpaces, Id("\xE2\x96\x81"), Id("x")}));
  // A typed U+2581 is a character like any other: it never completes a run
  // of spaces (llama.cpp matches user-defined pieces on the raw text).
  EXPECT_EQ(Encode("\xE2\x96\x81\xE2\x96\x81"), (Ids{Id("\xE2\x96\x81"), Id("\xE2\x96\x81")}));
  EXPECT_EQ(Encode("a\xE2\x96\x81 b"), (Ids{Id("a"), Id("\xE2\x96\x81"), Id("\xE2\x96\x81"), Id("b")}));
}

TEST_F(TinyTokenizerTest, ByteFallbackForUnknownCharacters) {
  // "é" = C3 A9 and "😀" = F0 9F 98 80 are not pieces.
  EXPECT_EQ(Encode("\xC3\xA9"), (Ids{tiny::kFirstByte + 0xC3, tiny::kFirstByte + 0xA9}));
  EXPECT_EQ(Encode("a\xF0\x9F\x98\x80"), (Ids{Id("a"), tiny::kFirstByte + 0xF0, tiny::kFirstByte + 0x9F,
                                              tiny::kFirstByte + 0x98, tiny::kFirstByte + 0x80}));
  EXPECT_EQ(Encode("A"), (Ids{tiny::kFirstByte + 'A'}));
}

TEST_F(TinyTokenizerTest, ControlTokensInTextAreCharacters) {
  const Ids ids = Encode("<end_of_turn><bos>");
  for (TokenId id : ids) {
    EXPECT_FALSE(tok_->IsControl(id)) << id;
  }
  EXPECT_EQ(ids.front(), Id("<"));
  EXPECT_EQ(*tok_->Decode(ids), "<end_of_turn><bos>");
}

TEST_F(TinyTokenizerTest, DecodeRoundTrips) {
  for (const std::string text : {"hello world", " hello  world ", "a\n\nb\tc", "caf\xC3\xA9 \xF0\x9F\x98\x80",
                                 "<start_of_turn>user", "   ", "\n"}) {
    auto ids = tok_->Encode(text);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*tok_->Decode(*ids), text);
  }
}

TEST_F(TinyTokenizerTest, DecodeSkipsControlAndRepairsBytes) {
  EXPECT_EQ(*tok_->Decode(Ids{tiny::kBos, Id("hello"), tiny::kEot}), "hello");
  // A lone continuation byte is not valid UTF-8: replaced by U+FFFD.
  EXPECT_EQ(*tok_->Decode(Ids{Id("a"), tiny::kFirstByte + 0x98}), "a\xEF\xBF\xBD");
}

TEST_F(TinyTokenizerTest, ErrorsAreValues) {
  EXPECT_EQ(tok_->Encode("bad \xC3").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tok_->Encode("\xED\xA0\x80").status().code(), StatusCode::kInvalidArgument);  // surrogate
  EXPECT_EQ(tok_->Decode(Ids{-1}).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(tok_->Decode(Ids{tok_->vocab_size()}).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(tok_->TokenPiece(tok_->vocab_size()).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(tok_->TokenBytes(-5).status().code(), StatusCode::kOutOfRange);
}

TEST_F(TinyTokenizerTest, IncrementalDecoderHoldsPartialCharacters) {
  IncrementalDecoder dec(*tok_);
  EXPECT_EQ(*dec.Push(Id("a")), "a");
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0xF0), "");
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0x9F), "");
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0x98), "");
  EXPECT_EQ(dec.pending_bytes(), 3u);
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(*dec.Push(tiny::kEot), "");
  EXPECT_EQ(dec.Flush(), "");
  // Out-of-range ids leave the state alone.
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0xC3), "");
  EXPECT_EQ(dec.Push(-1).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0xA9), "\xC3\xA9");
  // A character cut short at the end is flushed as U+FFFD.
  EXPECT_EQ(*dec.Push(tiny::kFirstByte + 0xE2), "");
  EXPECT_EQ(dec.Flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(dec.pending_bytes(), 0u);
}

TEST_F(TinyTokenizerTest, IncrementalDecodingMatchesDecode) {
  const std::string text = "hello \xC3\xA9\xF0\x9F\x98\x80 world\n\xE6\x97\xA5!";
  auto ids = tok_->Encode(text);
  ASSERT_TRUE(ids.ok());
  IncrementalDecoder dec(*tok_);
  std::string streamed;
  for (TokenId id : *ids) {
    auto piece = dec.Push(id);
    ASSERT_TRUE(piece.ok());
    EXPECT_TRUE(IsValidUtf8(*piece)) << "partial UTF-8 emitted after token " << id;
    streamed += *piece;
  }
  streamed += dec.Flush();
  EXPECT_EQ(streamed, text);
}

TEST(TinyTokenizerErrors, BadVocabulariesAreRejected) {
  {
    auto g = tiny::OpenTinyGguf({.model = "rwkv"});
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(Tokenizer::FromGguf(*g).status().code(), StatusCode::kUnsupported);
  }
  {
    auto g = tiny::OpenTinyGguf({.drop_last_byte = true});
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(Tokenizer::FromGguf(*g).status().code(), StatusCode::kCorrupt);
  }
  {
    auto g = tiny::OpenTinyGguf({.duplicate_piece = true});
    ASSERT_TRUE(g.ok());
    auto t = Tokenizer::FromGguf(*g);
    EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(t.status().message().find("twice"), std::string::npos) << t.status().ToString();
  }
  {
    testing::GgufWriter w;
    w.AddString("tokenizer.ggml.model", "llama");
    w.AddStringArray("tokenizer.ggml.tokens", {"a", "b"});
    w.AddF32Array("tokenizer.ggml.scores", {0});
    w.AddI32Array("tokenizer.ggml.token_type", {1, 1});
    auto g = tiny::OpenWritten(w);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Tokenizer::FromGguf(*g).status().code(), StatusCode::kCorrupt);
  }
}

}  // namespace
}  // namespace ragd::inference
