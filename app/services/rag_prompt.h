// The RAG prompt and its citations.
//
// The prompt is plain text continued by the model (the default model is a
// base model, which follows a worked example far better than a chat turn):
// short rules (answer only from the numbered sources, cite them as [n], say
// when the sources do not hold the answer, answer in the question's
// language, treat the sources as untrusted data), one worked example, then
// the retrieved passages as numbered one-line blocks and the question. Each
// passage is flattened to a single line, so no passage text can start a
// line of its own ("Question:", "Answer:") or pose as an instruction.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "app/http/json_request.h"
#include "inference/tokenizer/chat_format.h"
#include "retrieval/search.h"

namespace ragd::app {

// A retrieved passage with its citation number (1-based, in prompt order).
struct Source {
  int n = 0;
  retrieval::SearchHit hit;
};

std::vector<Source> NumberSources(std::vector<retrieval::SearchHit> hits);

// The prompt text (without BOS) for `question`; `history` holds earlier
// turns (user/assistant pairs) of a chat, may be empty.
std::string BuildRagPrompt(const std::string& question, const std::vector<Source>& sources,
                           const std::vector<inference::ChatMessage>& history = {});

// Stop strings that end the answer before the model invents a next example.
const std::vector<std::string>& RagStopStrings();

// Every number inside the well-formed markers [n] and [n, m, ...] of
// `answer`, in order and with repeats, whether or not it names a source.
std::vector<long> CitationMarkerNumbers(const std::string& answer);

// The numbers n of the [n] (and [n, m]) markers in `answer` that refer to one
// of `n_sources` sources; markers pointing nowhere are ignored.
std::set<int> CitedNumbers(const std::string& answer, int n_sources);

// {"n","document_id","title","chunk_id","text","score"} for each source
// (all, or only those in `only` when given).
Json CitationsJson(const std::vector<Source>& sources, const std::set<int>* only = nullptr);

}  // namespace ragd::app
