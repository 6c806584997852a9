// Shared by the tests of real vocabularies against llama.cpp golden files
// (gemma_fixture.h, qwen_fixture.h): loading a model's tokenizer and the
// checks every golden file gets.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference::real_vocab {

// The tokenizer of the GGUF at `path`; null, with a test failure naming
// `what`, when the file is missing or the tokenizer cannot be built.
inline std::unique_ptr<Tokenizer> Load(const std::string& path, const std::string& what) {
  auto gguf = GgufFile::Open(path);
  if (!gguf.ok()) {
    ADD_FAILURE() << "cannot open the " << what << " model: " << gguf.status().ToString();
    return nullptr;
  }
  auto tok = Tokenizer::FromGguf(*gguf);
  if (!tok.ok()) {
    ADD_FAILURE() << "cannot build the " << what << " tokenizer: " << tok.status().ToString();
    return nullptr;
  }
  return std::move(tok).value();
}

// The text of `ids` streamed one id at a time; every delta must be valid
// UTF-8 (a test failure naming `label` otherwise).
inline std::string Stream(const Tokenizer& tok, const std::vector<TokenId>& ids, const std::string& label) {
  IncrementalDecoder dec(tok);
  std::string streamed;
  for (TokenId id : ids) {
    auto piece = dec.Push(id);
    if (!piece.ok()) {
      ADD_FAILURE() << label << ": " << piece.status().ToString();
      break;
    }
    EXPECT_TRUE(IsValidUtf8(*piece)) << label << ": partial UTF-8 after token " << id;
    streamed += *piece;
  }
  return streamed + dec.Flush();
}

// Every golden case (objects with "name", "text" and "ids") encodes to its ids.
inline void ExpectEncodesLikeGolden(const Tokenizer& tok, const nlohmann::json& cases) {
  for (const auto& c : cases) {
    auto ids = tok.Encode(c["text"].get<std::string>());
    ASSERT_TRUE(ids.ok()) << c["name"] << ": " << ids.status().ToString();
    EXPECT_EQ(*ids, c["ids"].get<std::vector<TokenId>>())
        << "case " << c["name"] << " text " << c["text"].dump();
  }
}

// Every golden case's ids decode to its text, at once and streamed (which
// never emits a partial character).
inline void ExpectDecodesLikeGolden(const Tokenizer& tok, const nlohmann::json& cases) {
  for (const auto& c : cases) {
    const std::string text = c["text"];
    const auto ids = c["ids"].get<std::vector<TokenId>>();
    EXPECT_EQ(*tok.Decode(ids), text) << "case " << c["name"];
    EXPECT_EQ(Stream(tok, ids, c["name"]), text) << "case " << c["name"];
  }
}

// Special-token text typed by a user: several ordinary tokens, none of them
// control, that decode back to the text.
inline void ExpectTypedSpecialsStayText(const Tokenizer& tok, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    auto ids = tok.Encode(text);
    ASSERT_TRUE(ids.ok());
    EXPECT_GT(ids->size(), 1u) << text;
    for (TokenId id : *ids) {
      EXPECT_FALSE(tok.IsControl(id)) << text << " produced control token " << id;
    }
    EXPECT_EQ(*tok.Decode(*ids), text);
  }
}

// Encodes the text of every golden case (objects with "text" and "ids")
// `rounds` times on each of `threads` threads at once; returns how many
// results differ from the case's ids.
inline int EncodeMismatchesFromThreads(const Tokenizer& tok, const nlohmann::json& cases, int threads,
                                       int rounds) {
  std::vector<std::pair<std::string, std::vector<TokenId>>> expected;
  for (const auto& c : cases) expected.emplace_back(c["text"], c["ids"].get<std::vector<TokenId>>());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int round = 0; round < rounds; ++round) {
        for (const auto& [text, ids] : expected) {
          auto r = tok.Encode(text);
          if (!r.ok() || *r != ids) ++mismatches;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  return mismatches.load();
}

}  // namespace ragd::inference::real_vocab
