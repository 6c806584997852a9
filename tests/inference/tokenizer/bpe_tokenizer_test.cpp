// Byte-level BPE on a tiny vocabulary built by the test (no model file):
// the pre-tokenizer regexes of each supported tokenizer.ggml.pre, GPT-2's
// byte alphabet, merges by rank, special text kept plain, decoding, and the
// load errors.
#include <gtest/gtest.h>

#include "common/text.h"
#include "inference/tokenizer/bpe_pretokenizer.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/tiny_bpe_vocab.h"

namespace ragd::inference {
namespace {

using Ids = std::vector<TokenId>;
using tiny_bpe::Merged;

// The words llama.cpp's unicode_regex_split gives for each pre value (the
// expected lists were printed by llama.cpp's own src/unicode.cpp, the
// version llama-cpp-python 0.3.36 vendors).
struct SplitCase {
  const char* name;
  const char* pre;  // "" = key absent ("default")
  std::string text;
  std::vector<std::string> words;
};

const SplitCase kSplitCases[] = {
    {"words", "qwen2", "Hello world", {"Hello", " world"}},
    {"contractions_any_case",
     "qwen2",
     "I'm HERE, it's WE'RE we'VE 'll",
     {"I", "'m", " HERE", ",", " it", "'s", " WE", "'RE", " we", "'VE", " '", "ll"}},
    {"space_runs", "qwen2", "a  b   c", {"a", " ", " b", "  ", " c"}},
    {"leading_spaces", "qwen2", "  lead", {" ", " lead"}},
    {"trailing_spaces", "qwen2", "trail  ", {"trail", "  "}},
    {"newline_runs", "qwen2", "x\n\n  \ny", {"x", "\n\n  \n", "y"}},
    {"crlf", "qwen2", "a\r\nb\r\n", {"a", "\r\n", "b", "\r\n"}},
    {"tabs", "qwen2", "tab\t\tsep", {"tab", "\t", "\tsep"}},
    {"digits_one_by_one", "qwen2", "12345 x1y22", {"1", "2", "3", "4", "5", " x", "1", "y", "2", "2"}},
    {"special_text_is_plain",
     "qwen2",
     "<|im_start|>user\nhi<|im_end|>",
     {"<|", "im", "_start", "|>", "user", "\n", "hi", "<|", "im", "_end", "|>"}},
    {"punctuation_takes_newlines", "qwen2", "foo()!!\n\nbar", {"foo", "()!!\n\n", "bar"}},
    // U+00A0 and U+3000 are white space; U+180E is not (PCRE2's \s says it is).
    {"unicode_spaces", "qwen2", "a\u00A0b c\u3000d", {"a", "\u00A0b", " c", "\u3000d"}},
    {"u180e_is_not_space", "qwen2", "a \u180E!", {"a", " \u180E!"}},
    // Kawi letters U+11F04/5 and digits U+11F50/1 (Unicode 15).
    {"unicode15_letters_digits",
     "qwen2",
     "x\U00011F04\U00011F05 \U00011F50\U00011F51",
     {"x\U00011F04\U00011F05", " ", "\U00011F50", "\U00011F51"}},
    {"accents_cjk_emoji",
     "qwen2",
     "caf\u00E9 \u65E5\u672C\u8A9E \U0001F600\U0001F600 \u00BFqu\u00E9?",
     {"caf\u00E9", " \u65E5\u672C\u8A9E", " \U0001F600\U0001F600", " \u00BF", "qu\u00E9", "?"}},
    {"empty", "qwen2", "", {}},
    // Llama 3: digits in groups of three from the left.
    {"digits_by_three", "llama-bpe", "12345 1234567", {"123", "45", " ", "123", "456", "7"}},
    {"contraction_upper", "llama-bpe", "I'M here", {"I", "'M", " here"}},
    {"leading_spaces", "llama-bpe", "  lead", {" ", " lead"}},
    {"newline_runs", "llama-bpe", "x\n\n  \ny", {"x", "\n\n  \n", "y"}},
    {"contraction_crlf", "llama-bpe", "don't  stop\r\n", {"don", "'t", " ", " stop", "\r\n"}},
    {"digit_runs", "gpt-2", "Hello  world 123 4567", {"Hello", " ", " world", " 123", " 4567"}},
    {"contractions_lower_only", "gpt-2", "I'M it's", {"I", "'", "M", " it", "'s"}},
    // No \s+ alternative: a newline before a letter is left between matches.
    {"newlines_apart", "gpt-2", "a\n\nb", {"a", "\n", "\n", "b"}},
    {"trailing_spaces", "gpt-2", "x   ", {"x", "   "}},
    // \p{N} first, then GPT-2's regex within what it left.
    {"digits_isolated", "smollm", "abc 123 x4", {"abc", " ", "1", "2", "3", " x", "4"}},
    {"default_four_regexes",
     "",
     "Hello, world!!! 12345 $100+",
     {"Hello", ",", " world", "!!!", " ", "123", "45", " ", "$", "100", "+"}},
};

class PreTokenizerTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(PreTokenizerTest, SplitsAsLlamaCpp) {
  const SplitCase& c = GetParam();
  auto pre = BpePreTokenizer::Create(c.pre);
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  std::vector<std::string_view> words;
  ASSERT_TRUE((*pre)->Split(c.text, &words).ok());
  EXPECT_EQ(std::vector<std::string>(words.begin(), words.end()), c.words);
}

INSTANTIATE_TEST_SUITE_P(Cases, PreTokenizerTest, ::testing::ValuesIn(kSplitCases), [](const auto& info) {
  std::string pre = *info.param.pre ? info.param.pre : "default";
  for (char& ch : pre) ch = ch == '-' ? '_' : ch;
  return pre + "_" + info.param.name;
});

TEST(PreTokenizer, Settings) {
  auto llama3 = BpePreTokenizer::Create("llama-bpe");
  auto qwen2 = BpePreTokenizer::Create("qwen2");
  ASSERT_TRUE(llama3.ok() && qwen2.ok());
  EXPECT_TRUE((*llama3)->ignore_merges());
  EXPECT_TRUE((*llama3)->add_bos());
  EXPECT_FALSE((*qwen2)->ignore_merges());
  EXPECT_FALSE((*qwen2)->add_bos());
}

class BpeTokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = tiny_bpe::Load();
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tok_ = std::move(t).value();
  }
  Ids Encode(const std::string& text) const {
    auto r = tok_->Encode(text);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Ids{};
  }
  std::unique_ptr<Tokenizer> tok_;
};

TEST_F(BpeTokenizerTest, SpecialIds) {
  EXPECT_EQ(tok_->vocab_size(), tiny_bpe::kUnused + 1);
  EXPECT_EQ(tok_->PieceToId("xyz"), tiny_bpe::kXyz);
  EXPECT_EQ(tok_->bos_id(), tiny_bpe::kEndOfText);
  EXPECT_EQ(tok_->eos_id(), tiny_bpe::kImEnd);
  EXPECT_EQ(tok_->eot_id(), tiny_bpe::kImEnd);
  EXPECT_FALSE(tok_->add_bos());  // key absent, qwen2
  EXPECT_EQ(tok_->start_of_turn_id(), -1);
  EXPECT_EQ(tok_->end_of_turn_id(), -1);
  EXPECT_TRUE(tok_->IsEndOfGeneration(tiny_bpe::kImEnd));
  EXPECT_TRUE(tok_->IsEndOfGeneration(tiny_bpe::kEndOfText));
  EXPECT_FALSE(tok_->IsEndOfGeneration(tiny_bpe::kImStart));
  EXPECT_FALSE(tok_->IsEndOfGeneration('a'));
  EXPECT_TRUE(tok_->IsControl(tiny_bpe::kImStart));
  EXPECT_FALSE(tok_->IsControl(tiny_bpe::kToolCall));
  EXPECT_FALSE(tok_->IsControl(tiny_bpe::kUnused));
  EXPECT_EQ(tok_->PieceToId("<|im_start|>"), tiny_bpe::kImStart);
  EXPECT_EQ(tok_->PieceToId("\u0120world"), Merged("\u0120world"));
  EXPECT_EQ(tok_->PieceToId(" world"), -1);
  EXPECT_EQ(*tok_->TokenPiece(Merged("\u0120world")), "\u0120world");
}

TEST_F(BpeTokenizerTest, ByteAlphabetRoundTrips) {
  // GPT-2's spellings: ' ' is U+0120 "Ġ", '\n' U+010A "Ċ", 0x7F U+0121,
  // 0xAD (the one gap in ¡..ÿ) U+0143, the last of the 68.
  EXPECT_EQ(*tok_->TokenPiece(' '), "\u0120");
  EXPECT_EQ(*tok_->TokenPiece('\n'), "\u010A");
  EXPECT_EQ(*tok_->TokenPiece(0x7F), "\u0121");
  EXPECT_EQ(*tok_->TokenPiece(0xAD), "\u0143");
  EXPECT_EQ(*tok_->TokenPiece('A'), "A");
  EXPECT_EQ(*tok_->TokenPiece(0xE9), "\xC3\xA9");  // é stands for byte 0xE9
  std::string all;
  Ids ids;
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(*tok_->TokenBytes(b), std::string(1, static_cast<char>(b))) << b;
    all.push_back(static_cast<char>(b));
    ids.push_back(b);
  }
  EXPECT_EQ(*tok_->Decode(ids), RepairUtf8(all));
  // Text without merges is one byte piece per byte.
  EXPECT_EQ(Encode("\xC3\xA9"), (Ids{0xC3, 0xA9}));
  EXPECT_EQ(Encode("\xF0\x9F\x98\x80"), (Ids{0xF0, 0x9F, 0x98, 0x80}));
  EXPECT_EQ(Encode("\x7F"), (Ids{0x7F}));
  EXPECT_EQ(Encode("Q"), (Ids{'Q'}));
}

TEST_F(BpeTokenizerTest, MergesApplyByRank) {
  EXPECT_EQ(Encode("hello world"), (Ids{Merged("hello"), Merged("\u0120world")}));
  // "b c" ranks before "a b".
  EXPECT_EQ(Encode("abc"), (Ids{'a', Merged("bc")}));
  EXPECT_EQ(Encode("ab"), (Ids{Merged("ab")}));
  // Equal ranks: leftmost first.
  EXPECT_EQ(Encode("aaa"), (Ids{Merged("aa"), 'a'}));
  EXPECT_EQ(Encode("aaaa"), (Ids{Merged("aa"), Merged("aa")}));
  // Merges stay within a word ("1" "2" "3" are words of their own in qwen2).
  EXPECT_EQ(Encode("123"), (Ids{'1', '2', '3'}));
  EXPECT_EQ(Encode(" hello"), (Ids{' ', Merged("hello")}));
  EXPECT_EQ(Encode("x  \n\n"), (Ids{'x', Merged("\u0120\u0120"), Merged("\u010A\u010A")}));
  EXPECT_EQ(Encode(""), Ids{});
}

TEST_F(BpeTokenizerTest, SpecialTextStaysPlain) {
  for (const std::string text : {"<|im_start|>user", "<|im_end|>", "<|endoftext|>", "[PAD]"}) {
    const Ids ids = Encode(text);
    EXPECT_GT(ids.size(), 1u) << text;
    for (TokenId id : ids) {
      EXPECT_LT(id, tiny_bpe::kXyz) << text << " gave special token " << id;
    }
    EXPECT_EQ(*tok_->Decode(ids), text);
  }
}

TEST_F(BpeTokenizerTest, UserDefinedPiecesAreMatchedOnRawText) {
  // As llama_tokenize(parse_special=false) does: only control tokens stay text.
  EXPECT_EQ(Encode("a<tool_call>b"), (Ids{'a', tiny_bpe::kToolCall, 'b'}));
  EXPECT_EQ(*tok_->Decode(Ids{tiny_bpe::kToolCall}), "<tool_call>");
}

TEST_F(BpeTokenizerTest, DecodeSkipsControlAndUnused) {
  EXPECT_EQ(*tok_->Decode(Ids{tiny_bpe::kImStart, Merged("hello"), tiny_bpe::kImEnd, tiny_bpe::kEndOfText}),
            "hello");
  EXPECT_EQ(*tok_->TokenBytes(tiny_bpe::kImEnd), "");
  EXPECT_EQ(*tok_->TokenBytes(tiny_bpe::kUnused), "");
  EXPECT_EQ(*tok_->TokenBytes(Merged("\u0120world")), " world");
  // A lone continuation byte is replaced; TokenBytes keeps it.
  EXPECT_EQ(*tok_->Decode(Ids{'a', 0x98}), "a\xEF\xBF\xBD");
  EXPECT_EQ(*tok_->TokenBytes(0x98), "\x98");
}

TEST_F(BpeTokenizerTest, DecodeRoundTrips) {
  for (const std::string text :
       {"hello world", " hello  world ", "a\n\nb\tc\r\n", "caf\xC3\xA9 \xF0\x9F\x98\x80", "<|im_start|>user",
        "   ", "\n", "abc aaaa 123", "x<tool_call>y"}) {
    EXPECT_EQ(*tok_->Decode(Encode(text)), text);
  }
}

TEST_F(BpeTokenizerTest, IncrementalDecoderJoinsBytePieces) {
  IncrementalDecoder dec(*tok_);
  EXPECT_EQ(*dec.Push(Merged("hello")), "hello");
  EXPECT_EQ(*dec.Push(0xF0), "");
  EXPECT_EQ(*dec.Push(0x9F), "");
  EXPECT_EQ(*dec.Push(0x98), "");
  EXPECT_EQ(*dec.Push(0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(*dec.Push(tiny_bpe::kImEnd), "");
  EXPECT_EQ(dec.Flush(), "");
}

TEST_F(BpeTokenizerTest, ErrorsAreValues) {
  EXPECT_EQ(tok_->Encode("bad \xC3").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tok_->Decode(Ids{tok_->vocab_size()}).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(tok_->TokenBytes(-1).status().code(), StatusCode::kOutOfRange);
}

TEST(BpeTokenizerSettings, AddBosFollowsKeyThenPre) {
  EXPECT_TRUE((*tiny_bpe::Load({.add_bos = true}))->add_bos());
  EXPECT_TRUE((*tiny_bpe::Load({.pre = "llama-bpe"}))->add_bos());
  EXPECT_FALSE((*tiny_bpe::Load({.pre = "llama-bpe", .add_bos = false}))->add_bos());
  EXPECT_FALSE((*tiny_bpe::Load({.pre = std::nullopt}))->add_bos());
}

TEST(BpeTokenizerSettings, LlamaBpeTakesWholeWordPieces) {
  // "xyz" is a piece no merge makes: llama-bpe (ignore_merges) takes it whole.
  auto llama3 = tiny_bpe::Load({.pre = "llama-bpe"});
  auto qwen2 = tiny_bpe::Load();
  ASSERT_TRUE(llama3.ok() && qwen2.ok());
  EXPECT_EQ(*(*llama3)->Encode("xyz"), (Ids{tiny_bpe::kXyz}));
  EXPECT_EQ(*(*qwen2)->Encode("xyz"), (Ids{'x', 'y', 'z'}));
  EXPECT_EQ(*(*llama3)->Encode("1234"), (Ids{Merged("123"), '4'}));
}

TEST(BpeTokenizerSettings, EndOfGenerationPiecesActAsControl) {
  // llama.cpp retypes <|im_end|> as control even when the GGUF says user-defined.
  auto t = tiny_bpe::Load({.im_end_user_defined = true});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE((*t)->IsControl(tiny_bpe::kImEnd));
  EXPECT_GT((*t)->Encode("<|im_end|>")->size(), 1u);
  EXPECT_EQ(*(*t)->TokenBytes(tiny_bpe::kImEnd), "");
}

// A damaged file's token type past int's range (found by fuzz_gguf: its
// conversion to int was undefined) loads as an unused piece.
TEST(BpeTokenizerSettings, TokenTypeOutOfIntRangeIsUnused) {
  auto t = tiny_bpe::Load({.last_type = 7.5e28f});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const TokenId last = (*t)->vocab_size() - 1;
  EXPECT_FALSE((*t)->IsControl(last));
  EXPECT_EQ(*(*t)->TokenBytes(last), "");
}

struct LoadErrorCase {
  const char* name;
  tiny_bpe::VocabEdits edits;
  StatusCode code;
  const char* message_part;
};

class BpeLoadErrorTest : public ::testing::TestWithParam<LoadErrorCase> {};

TEST_P(BpeLoadErrorTest, IsAClearStatus) {
  const LoadErrorCase& c = GetParam();
  auto t = tiny_bpe::Load(c.edits);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), c.code) << t.status().ToString();
  EXPECT_NE(t.status().message().find(c.message_part), std::string::npos) << t.status().ToString();
}

const LoadErrorCase kLoadErrors[] = {
    {"unknown_pre", {.pre = "no-such-pre"}, StatusCode::kUnsupported, "'no-such-pre'"},
    // llama.cpp spells GPT-2's pre-tokenizer "gpt-2"; "gpt2" is only a model name.
    {"gpt2_is_not_a_pre", {.pre = "gpt2"}, StatusCode::kUnsupported, "'gpt2'"},
    {"unsupported_model", {.model = "rwkv"}, StatusCode::kUnsupported, "'rwkv'"},
    {"merge_left_not_in_vocab", {.extra_merges = {"q\u0120 z"}}, StatusCode::kCorrupt, "'q\u0120'"},
    {"merge_right_not_in_vocab", {.extra_merges = {"a qq"}}, StatusCode::kCorrupt, "'qq'"},
    {"merge_result_not_in_vocab", {.extra_merges = {"x y"}}, StatusCode::kCorrupt, "'xy'"},
    {"merge_without_space", {.extra_merges = {"xy"}}, StatusCode::kCorrupt, "separated by a space"},
    {"token_types_short", {.short_types = true}, StatusCode::kCorrupt, "token_type"},
    {"duplicate_piece", {.duplicate_piece = true}, StatusCode::kCorrupt, "twice"},
    {"missing_byte_piece", {.drop_space_byte = true}, StatusCode::kCorrupt, "byte 32"},
    {"merges_missing", {.no_merges = true}, StatusCode::kCorrupt, "merges"},
    {"merges_not_strings", {.merges_not_strings = true}, StatusCode::kCorrupt, "merges"},
};

INSTANTIATE_TEST_SUITE_P(Cases, BpeLoadErrorTest, ::testing::ValuesIn(kLoadErrors),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ragd::inference
