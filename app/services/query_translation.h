// Questions in other languages are searched in English. The embedding model
// (all-MiniLM-L6-v2) was trained on English text, and the lexical index
// matches words, so "Quelle est la taille maximale d'un document accepté ?"
// finds little in an English guide. Before retrieval the fast model
// translates the search text (about 45 prompt and 15 answer tokens, some
// 0.2 s); the search, the relevance check that may abstain and the sources
// then follow the English text, while the answer is still written from the
// original question, in its language.
//
// On the labelled set (tests/data/rag_eval.jsonl, 62 questions in five
// languages), recall@5 went from 0.846 to 0.962 and MRR from 0.580 to 0.746
// with the Qwen2.5-Coder 0.5B translating.
//
// Thread-safety: a Translator may be called from any number of threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/generator.h"

namespace ragd::app {

// Translates a search text into English; an error (no reply in time, an
// empty one, one not in English) leaves the caller to search the original.
using Translator = std::function<Result<std::string>(std::string_view text)>;

// The request that has `engine`'s chat model translate `text` (made one
// line): greedy, one line of at most 64 tokens. kUnsupported for a model
// without a chat template.
Result<inference::GenerationRequest> TranslationRequest(const inference::Engine& engine,
                                                        std::string_view text);

// The model's reply reduced to the translation: its first line, trimmed,
// without surrounding quotes. "" when nothing is left.
std::string CleanTranslation(std::string_view reply);

// A Translator on `generator` (a loaded model's, with `engine` its
// vocabulary and chat template), giving up after `timeout` (the answer
// should not wait behind a busy fast model). `cache_scope` is the scope of
// the caller's prompts (inference/engine.h). `engine` and `generator` must
// outlive the Translator.
Translator TranslateWith(const inference::Engine& engine, inference::Generator& generator,
                         std::chrono::milliseconds timeout, uint64_t cache_scope = 0);

// A Translator running `engine` itself, one request at a time (`ragd eval`,
// which has no scheduler). `engine` must outlive it.
Translator TranslateWithEngine(inference::Engine& engine);

}  // namespace ragd::app
