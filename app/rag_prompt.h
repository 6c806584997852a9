// The RAG prompt and its citations.
//
// The prompt gives the model short rules (answer only from the numbered
// sources, cite them as [n], say when the sources do not hold the answer,
// answer in the question's language) and the retrieved passages as numbered
// blocks that are clearly marked as untrusted data: a passage cannot close
// its block or pose as an instruction, whatever text it contains.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "app/json_request.h"
#include "inference/tokenizer/chat_format.h"
#include "retrieval/search.h"

namespace ragd::app {

// A retrieved passage with its citation number (1-based, in prompt order).
struct Source {
  int n = 0;
  retrieval::SearchHit hit;
};

std::vector<Source> NumberSources(std::vector<retrieval::SearchHit> hits);

// The conversation to send to the model: the rules and sources folded into
// the user turn before `question` (`history` holds earlier turns, may be empty).
std::vector<inference::ChatMessage> BuildRagConversation(const std::string& question,
                                                         const std::vector<Source>& sources,
                                                         const std::vector<inference::ChatMessage>& history = {});

// The numbers n of the [n] (and [n, m]) markers in `answer` that refer to one
// of `n_sources` sources; markers pointing nowhere are ignored.
std::set<int> CitedNumbers(const std::string& answer, int n_sources);

// {"n","document_id","title","chunk_id","text","score"} for each source
// (all, or only those in `only` when given).
Json CitationsJson(const std::vector<Source>& sources, const std::set<int>* only = nullptr);

}  // namespace ragd::app
