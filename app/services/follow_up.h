// A follow-up question ("and its default value?", "E o limite de tokens por
// minuto?") made into one that stands alone, by the answer model, before
// retrieval. Searched together with the previous question, a follow-up
// found passages about the previous question; answered with the earlier
// turns in the conversation, the 1.5B model repeated its previous answer
// (5 of the 6 follow-ups of tests/data/rag_eval.jsonl missed their key
// fact). Asked to rewrite the follow-up as a complete question in its own
// language, it wrote a usable one for 4 of the 6; the 0.5B mostly repeated
// the earlier question or answered it, so the rewrite is the answer
// model's (about 90 prompt and 20 answer tokens).
//
// The rewritten question is then searched (translated to English as any
// question is, query_translation.h) and is the question the model answers;
// the earlier turns stay in the conversation.
//
// Thread-safety: a Rewriter may be called from any number of threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/generator.h"

namespace ragd::app {

// The standalone form of `question` after `history` (user/assistant turns);
// an error (no reply in time, an empty one, one in another language, one
// that loses a name or most words of the question) leaves the caller to use
// the question as asked.
using Rewriter = std::function<Result<std::string>(const std::vector<inference::ChatMessage>& history,
                                                   std::string_view question)>;

// The last user turn of `history`; null when there is none.
const inference::ChatMessage* LastUserTurn(const std::vector<inference::ChatMessage>& history);

// Whether `question`, asked after `history`, may be a follow-up: a question
// of at most `max_words` words with an earlier user turn.
bool MayFollowUp(const std::vector<inference::ChatMessage>& history, std::string_view question,
                 size_t max_words);

// Questions of up to this many words after an earlier one are rewritten: the
// follow-ups of the labelled set have 6 to 11 ("How does it recognise that
// it is the same file?"), and one that already stands alone comes back
// about the same.
constexpr size_t kRewriteMaxWords = 12;

// Whether `engine` is asked to rewrite follow-ups: a model tuned to follow
// instructions with at least a billion parameters (the 0.5B's rewrites
// mostly repeated the earlier question).
bool RewritesFollowUps(const inference::Engine& engine);

// The request that has `engine`'s chat model rewrite `question`: greedy,
// one line of at most 64 tokens. kUnsupported for a model without a chat
// template, kInvalidArgument when `history` has no user turn.
Result<inference::GenerationRequest> RewriteRequest(const inference::Engine& engine,
                                                    const std::vector<inference::ChatMessage>& history,
                                                    std::string_view question);

// A Rewriter on `generator` (a loaded model's, `engine` its vocabulary and
// chat template), giving up after `timeout`. `cache_scope` is the scope of
// the caller's prompts (inference/engine.h). `engine` and `generator` must
// outlive the Rewriter.
Rewriter RewriteWith(const inference::Engine& engine, inference::Generator& generator,
                     std::chrono::milliseconds timeout, uint64_t cache_scope = 0);

}  // namespace ragd::app
