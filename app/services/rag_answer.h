// Answering a question from the corpus: the passages retrieved for it,
// numbered as citations, and the generation request that answers from them
// (the RAG conversation of rag_prompt.h in the model's chat template). One service
// for /v1/ask, the "ragd-rag" model of /v1/chat/completions and `ragd eval`,
// so an evaluated answer is made the way a served one is.
//
// Thread-safety: as the retriever and tokenizer passed in (both may be
// shared by many threads).
#pragma once

#include <string>
#include <vector>

#include "app/config/config.h"
#include "app/ops/metrics.h"
#include "app/services/answerability.h"
#include "app/services/follow_up.h"
#include "app/services/query_translation.h"
#include "app/services/rag_prompt.h"
#include "inference/engine.h"
#include "retrieval/retriever.h"

namespace ragd::app {

struct RagQuestion {
  std::string question;
  std::vector<inference::ChatMessage> history;  // earlier turns of a chat (user/assistant), may be empty
  int top_k = 5;                                // passages retrieved and shown to the model
  // Nothing relevant was retrieved when the best passage's cosine is under
  // the first and its BM25 under the second (RagConfig), for a search in
  // English (the embedding model's language; a translated question's
  // included): no generation then.
  double abstain_dense_below = 0;
  double abstain_lexical_below = 0;
  // Passages after the first whole_sources are shown to the model as their
  // excerpt of at most excerpt_bytes for the search query
  // (retrieval/excerpt.h); whole_sources 0 shows all whole.
  int whole_sources = 0;
  size_t excerpt_bytes = 320;
  std::vector<corpus::DocumentId> only_documents;  // non-empty: retrieve from these documents only
  // Set: a question in another language than English is searched in the
  // English this gives (query_translation.h); unset or failing: as asked.
  Translator to_english;
  // Set: a possible follow-up (MayFollowUp, kRewriteMaxWords) is searched and answered as the question
  // this makes of it (follow_up.h); unset or failing: as SearchQuery says.
  Rewriter standalone;
  // Set, with a threshold above 0: before a model the check separates
  // (AnswerabilityCheckSeparates) answers, it is asked whether the sources
  // state the answer (answerability.h), and ragd abstains when the share of
  // "yes" is under the threshold. A check that fails (too slow, an error)
  // lets the model answer.
  AnswerabilityJudge answerable;
  double abstain_answerability_below = 0;
};

// Sets the fields of `q` that the configuration decides for every answer:
// the retrieval abstention thresholds and how many passages the model sees
// whole. The server and `ragd eval` both take them from here, so that an
// evaluated answer is planned as a served one is.
void ApplyRagConfig(const RagConfig& rag, RagQuestion* q);

struct RagAnswerPlan {
  std::vector<Source> sources;  // the retrieved passages, numbered in prompt order
  double retrieval_ms = 0;      // time spent searching
  std::string search_query;     // what was searched (the question, or with its topic for a follow-up)
  std::string rewritten;        // a follow-up's standalone form, searched and answered; empty when none
  double rewrite_ms = 0;        // time spent rewriting (0 when not)
  bool translated = false;      // search_query is the English translation of that
  double translation_ms = 0;    // time spent translating (0 when not)
  double answerability = -1;    // the answerability check's share of "yes"; -1 when not checked
  double answerability_ms = 0;  // time spent on it
  // Nonempty when retrieval found nothing relevant (sources then empty) or
  // the answerability check says the sources do not answer (sources kept):
  // the answer to give, in the question's language, instead of generating.
  std::string abstention;
  inference::GenerationRequest request;  // ready to run (unused with an abstention)
};

// The text searched for `q`. A follow-up ("and in German?", "why?", "what is
// its default?") carries its topic only in the turn before, so a question of
// few words is searched together with the user's previous question; a
// longer one is searched alone (adding an older topic would pull in
// passages about it instead).
std::string SearchQuery(const RagQuestion& q);

// The 1-based page holding byte `offset` of a PDF's text, whose pages are
// separated by form feeds (corpus/extract.h).
int PageAt(std::string_view text, int64_t offset);

// Moves the passages that speak to the model (retrieval/instructions.h)
// after the others, each group in its order. What is left of such a passage
// once those words are left out is rarely an answer (injected passages
// restate the question so as to be retrieved), and a small model reads and
// cites its first sources most.
void PutInstructionsToModelLast(std::vector<retrieval::SearchHit>& hits);

// "The documents do not say." in the language of `question` (English,
// Portuguese, French, Spanish or German, guessed from its common words and
// letters; English when unsure).
std::string AbstentionText(const std::string& question);

// How answers are decoded unless the request says otherwise: greedy, so
// answers quote their sources, with a light repetition penalty.
inference::SamplingOptions RagAnswerSampling();

// Retrieves the passages for `q` and completes `request` (which carries the
// caller's sampling, max_tokens and stop strings) for `engine`'s model: its
// prompt becomes the RAG conversation in the model's chat template, or, for
// a base model, the plain RAG prompt with the RAG stop strings added. `metrics`, when given,
// records the retrieval latency.
Result<RagAnswerPlan> PlanRagAnswer(const retrieval::Retriever& retriever, const inference::Engine& engine,
                                    const RagQuestion& q, inference::GenerationRequest request,
                                    Metrics* metrics = nullptr);

}  // namespace ragd::app
