// The checks shared by the SentencePiece and byte-level BPE targets, which
// drive the real vocabularies of the default models (scripts/fetch-models;
// $RAGD_MODELS or ~/.cache/ragd/models): every prompt and every uploaded
// passage goes through them.
//
// Input: text to encode. Invalid UTF-8 must be refused; valid text must give
// ids inside the vocabulary that decode back to the text, in one call and
// streamed one id at a time (every delta whole characters). The same bytes,
// read as little-endian int32 ids, are decoded as well: ids from a client
// (/detokenize, logit_bias) are any number.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/test_paths.h"

namespace ragd::fuzz {

// The tokenizer of the model file `name` in the models folder; exits when it
// cannot be built (the target is meaningless without it).
inline std::unique_ptr<inference::Tokenizer> LoadModelTokenizer(const std::string& name) {
  const std::string path = ragd::testing::ModelsDir() + "/" + name;
  auto gguf = inference::GgufFile::Open(path);
  if (!gguf.ok()) {
    std::fprintf(stderr, "cannot open %s: %s (run scripts/fetch-models)\n", path.c_str(),
                 gguf.status().ToString().c_str());
    std::exit(2);
  }
  auto tok = inference::Tokenizer::FromGguf(*gguf);
  if (!tok.ok()) {
    std::fprintf(stderr, "cannot build the tokenizer of %s: %s\n", path.c_str(),
                 tok.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(tok).value();
}

// `expected` is what decoding must give back for `text` (the same text but
// for a tokenizer's documented normalisations).
inline void FuzzTokenizer(const inference::Tokenizer& tok, const uint8_t* data, size_t size,
                          std::string (*expected)(std::string_view text)) {
  using inference::TokenId;
  const std::string_view text = AsText(data, size);
  auto ids = tok.Encode(text);
  if (!IsValidUtf8(text)) {
    FUZZ_CHECK(!ids.ok(), "invalid UTF-8 was encoded");
  } else {
    FUZZ_CHECK(ids.ok(), "valid UTF-8 was refused");
    FUZZ_CHECK(text.empty() == ids->empty(), "empty text iff no ids");
    for (TokenId id : *ids) {
      FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), "id outside the vocabulary");
      FUZZ_CHECK(!tok.IsControl(id), "Encode produced a control token");
    }
    auto decoded = tok.Decode(*ids);
    FUZZ_CHECK(decoded.ok(), "Decode of Encode's ids failed");
    FUZZ_CHECK(*decoded == expected(text), "Decode(Encode(text)) is not the text");
    inference::IncrementalDecoder stream(tok);
    std::string streamed;
    for (TokenId id : *ids) {
      auto delta = stream.Push(id);
      FUZZ_CHECK(delta.ok() && IsValidUtf8(*delta), "streamed delta is not whole characters");
      streamed += *delta;
    }
    streamed += stream.Flush();
    FUZZ_CHECK(streamed == *decoded, "streamed text differs from Decode");
  }

  std::vector<TokenId> raw(size / sizeof(TokenId));
  if (!raw.empty()) std::memcpy(raw.data(), data, raw.size() * sizeof(TokenId));
  bool all_in_range = true;
  for (TokenId id : raw) all_in_range = all_in_range && id >= 0 && id < tok.vocab_size();
  auto decoded = tok.Decode(raw);
  FUZZ_CHECK(decoded.ok() == all_in_range, "Decode accepts exactly the ids inside the vocabulary");
  if (decoded.ok()) FUZZ_CHECK(IsValidUtf8(*decoded), "Decode gave invalid UTF-8");
  inference::IncrementalDecoder stream(tok);
  for (TokenId id : raw) {
    auto delta = stream.Push(id);
    FUZZ_CHECK(delta.ok() == (id >= 0 && id < tok.vocab_size()), "Push range check");
    if (delta.ok()) FUZZ_CHECK(IsValidUtf8(*delta), "streamed delta is not whole characters");
    (void)tok.TokenPiece(id);
    (void)tok.TokenBytes(id);
  }
  FUZZ_CHECK(IsValidUtf8(stream.Flush()), "Flush gave invalid UTF-8");
}

}  // namespace ragd::fuzz
