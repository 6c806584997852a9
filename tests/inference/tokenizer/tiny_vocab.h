// A tiny Gemma-like SentencePiece vocabulary written as a GGUF file, so the
// tokenizer is tested without the real model. Layout of the ids:
//   0 <pad> 1 <eos> 2 <bos> 3 <unk> 4 <start_of_turn> 5 <end_of_turn> (control,
//   <unk> typed control as in Gemma's GGUF), 6 "\n" and 7 "  " (user-defined),
//   8..263 byte tokens <0x00>..<0xFF>, then normal pieces (see kNormal).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/support/gguf_writer.h"

namespace ragd::inference::tiny {

inline constexpr TokenId kPad = 0, kEos = 1, kBos = 2, kUnk = 3, kSot = 4, kEot = 5, kNewline = 6,
                         kTwoSpaces = 7, kFirstByte = 8, kFirstNormal = 8 + 256;

// Normal pieces with their BPE scores (higher merges first); single
// characters score lowest. "▁" is U+2581.
inline const std::vector<std::pair<std::string, float>>& NormalPieces() {
  static const std::vector<std::pair<std::string, float>> pieces = [] {
    std::vector<std::pair<std::string, float>> p = {
        {"he", -1},
        {"ll", -2},
        {"llo", -3},
        {"hello", -4},
        {"\xE2\x96\x81w", -5},
        {"or", -6},
        {"\xE2\x96\x81wor", -7},
        {"ld", -8},
        {"\xE2\x96\x81world", -9},
        {"us", -10},
        {"er", -11},
        {"user", -12},
        {"mo", -13},
        {"de", -14},
        {"del", -15},
        {"model", -16},
        {"\xE2\x96\x81hello", -17},
    };
    float s = -100;
    for (char c = 'a'; c <= 'z'; ++c) p.push_back({std::string(1, c), s--});
    for (const char* c : {"\xE2\x96\x81", "<", ">", "_", "!", ".", ",", "\t"}) p.push_back({c, s--});
    return p;
  }();
  return pieces;
}

// Id of a normal piece by its text (test helper; aborts the test if absent).
inline TokenId Id(const std::string& piece) {
  const auto& p = NormalPieces();
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].first == piece) return kFirstNormal + static_cast<TokenId>(i);
  }
  ADD_FAILURE() << "no piece " << piece;
  return -1;
}

struct VocabEdits {
  std::string model = "llama";
  bool drop_last_byte = false;
  bool duplicate_piece = false;
};

inline testing::GgufWriter Writer(const VocabEdits& edits = {}) {
  std::vector<std::string> tokens = {"<pad>",           "<eos>",         "<bos>", "<unk>",
                                     "<start_of_turn>", "<end_of_turn>", "\n",    "  "};
  std::vector<float> scores(tokens.size(), -1000);
  std::vector<int32_t> types = {3, 3, 3, 3, 3, 3, 4, 4};
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    if (edits.drop_last_byte && b == 255) tokens.back() = "<0xZZ>";
    scores.push_back(0);
    types.push_back(6);
  }
  for (const auto& [piece, score] : NormalPieces()) {
    tokens.push_back(edits.duplicate_piece && piece == "ll" ? "he" : piece);
    scores.push_back(score);
    types.push_back(1);
  }
  testing::GgufWriter w;
  w.AddString("general.architecture", "gemma3");
  w.AddString("tokenizer.ggml.model", edits.model);
  w.AddStringArray("tokenizer.ggml.tokens", tokens);
  w.AddF32Array("tokenizer.ggml.scores", scores);
  w.AddI32Array("tokenizer.ggml.token_type", types);
  w.AddU32("tokenizer.ggml.bos_token_id", kBos);
  w.AddU32("tokenizer.ggml.eos_token_id", kEos);
  w.AddU32("tokenizer.ggml.unknown_token_id", kUnk);
  w.AddU32("tokenizer.ggml.padding_token_id", kPad);
  w.AddTensor("token_embd.weight", {32, 1}, 0, std::vector<uint8_t>(128, 0));
  return w;
}

// The file `w` writes, opened (written to a temporary file, removed again).
inline Result<GgufFile> OpenWritten(const testing::GgufWriter& w) {
  static std::atomic<int> counter{0};
  const std::string path = ::testing::TempDir() + "/tiny_vocab_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++) + ".gguf";
  w.Write(path);
  auto f = GgufFile::Open(path);
  unlink(path.c_str());  // the mapping stays valid
  return f;
}

inline Result<GgufFile> OpenTinyGguf(const VocabEdits& edits = {}) { return OpenWritten(Writer(edits)); }

inline std::unique_ptr<Tokenizer> MakeTokenizer() {
  auto gguf = OpenTinyGguf();
  EXPECT_TRUE(gguf.ok()) << gguf.status().ToString();
  if (!gguf.ok()) return nullptr;
  auto tok = Tokenizer::FromGguf(*gguf);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? std::move(tok.value()) : nullptr;
}

}  // namespace ragd::inference::tiny
