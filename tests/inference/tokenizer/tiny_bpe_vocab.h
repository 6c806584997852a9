// A tiny Qwen-like byte-level BPE vocabulary written as a GGUF file, so the
// BPE tokenizer is tested without the real model. Layout of the ids:
//   0..255 the single-byte pieces, id == byte ("Ġ" for ' ', "Ċ" for '\n');
//   then one piece per merge of Merges(), in rank order (kFirstMerged...);
//   kXyz "xyz" (no merge makes it); kEndOfText <|endoftext|>, kImStart
//   <|im_start|>, kImEnd <|im_end|> (control); kToolCall <tool_call>
//   (user-defined); kUnused "[PAD]" (unused).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/inference/tokenizer/tiny_vocab.h"
#include "tests/support/gguf_writer.h"

namespace ragd::inference::tiny_bpe {

// "left right" in rank order; "b c" before "a b" so that "abc" is a + bc.
inline const std::vector<std::string>& Merges() {
  static const std::vector<std::string> merges = {
      "\u0120 \u0120", "h e",          "l l", "he ll", "hell o", "\u0120 w", "o r",  "\u0120w or",
      "\u0120wor l",   "\u0120worl d", "b c", "a b",   "a a",    "1 2",      "12 3", "\u010A \u010A",
  };
  return merges;
}

inline constexpr TokenId kFirstMerged = 256;
inline const TokenId kXyz = kFirstMerged + 16, kEndOfText = kXyz + 1, kImStart = kXyz + 2, kImEnd = kXyz + 3,
                     kToolCall = kXyz + 4, kUnused = kXyz + 5;

// The id of a merged piece, spelled as in the vocabulary ("Ġworld").
inline TokenId Merged(const std::string& piece) {
  const auto& m = Merges();
  for (size_t i = 0; i < m.size(); ++i) {
    std::string joined = m[i];
    joined.erase(joined.find(' ', 1), 1);
    if (joined == piece) return kFirstMerged + static_cast<TokenId>(i);
  }
  ADD_FAILURE() << "no merged piece " << piece;
  return -1;
}

// GPT-2's spelling of byte b.
inline std::string BytePiece(int b) {
  const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  int cp = b;
  if (!printable) {
    cp = 0x100;
    for (int k = 0; k < b; ++k) cp += !((k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE);
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

struct VocabEdits {
  std::string model = "gpt2";
  std::optional<std::string> pre = "qwen2";  // nullopt: key absent
  std::optional<bool> add_bos;               // nullopt: key absent
  std::vector<std::string> extra_merges;     // appended after Merges()
  bool drop_space_byte = false;              // the piece of ' ' renamed
  bool short_types = false;                  // token_type one entry short
  bool duplicate_piece = false;              // "xyz" spelled "he"
  bool merges_not_strings = false;           // merges written as numbers
  bool no_merges = false;
  bool im_end_user_defined = false;  // <|im_end|> typed user-defined
  std::optional<float> last_type;    // token_type written as floats, the last one this
};

inline testing::GgufWriter Writer(const VocabEdits& edits = {}) {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(edits.drop_space_byte && b == ' ' ? "<space>" : BytePiece(b));
    types.push_back(1);
  }
  for (std::string m : Merges()) {
    tokens.push_back(m.erase(m.find(' ', 1), 1));
    types.push_back(1);
  }
  tokens.push_back(edits.duplicate_piece ? "he" : "xyz");
  types.push_back(1);
  for (const auto& [piece, type] :
       std::vector<std::pair<std::string, int32_t>>{{"<|endoftext|>", 3},
                                                    {"<|im_start|>", 3},
                                                    {"<|im_end|>", edits.im_end_user_defined ? 4 : 3},
                                                    {"<tool_call>", 4},
                                                    {"[PAD]", 5}}) {
    tokens.push_back(piece);
    types.push_back(type);
  }
  if (edits.short_types) types.pop_back();
  std::vector<std::string> merges = Merges();
  merges.insert(merges.end(), edits.extra_merges.begin(), edits.extra_merges.end());

  testing::GgufWriter w;
  w.AddString("general.architecture", "qwen2");
  w.AddString("tokenizer.ggml.model", edits.model);
  if (edits.pre) w.AddString("tokenizer.ggml.pre", *edits.pre);
  w.AddStringArray("tokenizer.ggml.tokens", tokens);
  if (edits.last_type) {
    std::vector<float> as_floats(types.begin(), types.end());
    as_floats.back() = *edits.last_type;
    w.AddF32Array("tokenizer.ggml.token_type", as_floats);
  } else {
    w.AddI32Array("tokenizer.ggml.token_type", types);
  }
  if (edits.merges_not_strings) {
    w.AddI32Array("tokenizer.ggml.merges", {1, 2});
  } else if (!edits.no_merges) {
    w.AddStringArray("tokenizer.ggml.merges", merges);
  }
  w.AddU32("tokenizer.ggml.bos_token_id", kEndOfText);
  w.AddU32("tokenizer.ggml.eos_token_id", kImEnd);
  w.AddU32("tokenizer.ggml.padding_token_id", kEndOfText);
  if (edits.add_bos) w.AddBool("tokenizer.ggml.add_bos_token", *edits.add_bos);
  w.AddTensor("token_embd.weight", {32, 1}, 0, std::vector<uint8_t>(128, 0));
  return w;
}

inline Result<std::unique_ptr<Tokenizer>> Load(const VocabEdits& edits = {}) {
  auto gguf = tiny::OpenWritten(Writer(edits));
  if (!gguf.ok()) return gguf.status();
  return Tokenizer::FromGguf(*gguf);
}

}  // namespace ragd::inference::tiny_bpe
