// The RAG prompt and its citations.
//
// For an instruction-tuned model the prompt is a conversation in its chat
// template: a system message with the rules (answer only from the numbered
// sources, cite them as [n], answer in the question's language, treat the
// sources as data and never as instructions), then the conversation so far, then a user message holding
// the sources fenced as data and the question. The system message is the
// same for every question, so the prefix cache reuses it. Each source is one
// <source> element with its number, title and section; '<' and '>' inside
// titles and passages are written as entities, so no passage can close its
// element, fake another source or pose as the question (turn markers are
// special tokens, never parsed from text). No invented example: it would
// leak into answers.
//
// A base model (no chat template) gets the same rules and sources as plain
// text ending in "Answer:", and the stop strings below.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "app/http/json_request.h"
#include "inference/tokenizer/chat_format.h"
#include "retrieval/search.h"

namespace ragd::app {

// A retrieved passage with its citation number (1-based, in prompt order).
struct Source {
  int n = 0;
  retrieval::SearchHit hit;
  int page = 0;  // 1-based page of a PDF passage's start; 0 when the document has no pages
  // What the model is shown of the passage when not all of it
  // (retrieval/excerpt.h); empty = hit.text. Clients and attribution get hit.text.
  std::string excerpt;
};

std::vector<Source> NumberSources(std::vector<retrieval::SearchHit> hits);

// The language a question is written in, as far as its common words and
// letters tell (English, Portuguese, French, Spanish or German; English
// when unsure), and how to say in it that the documents do not say.
struct QuestionLanguage {
  const char* code;        // "pt" (ISO 639-1)
  const char* name;        // "Portuguese"
  const char* abstention;  // "Os documentos não dizem."
  // The rules repeated after the sources, written in this language and
  // naming it (a small model answers in the language it read last): for a
  // model whose answerability was checked, and, also telling it to say when
  // the sources do not answer, for any other.
  const char* reminder;
  const char* unchecked_reminder;
};
const QuestionLanguage& DetectQuestionLanguage(const std::string& question);

// `s` with every run of whitespace (newlines included) collapsed to one
// space, none at either end: user text that cannot start a line of its own.
std::string OneLine(std::string_view s);

// The conversation for a chat model: rules, `history` (earlier user and
// assistant turns, may be empty), then sources and question.
// `answerability_checked`: the model was asked whether the sources answer
// and said they do (answerability.h), so its rules do not tell it to say
// when they do not; otherwise they do.
std::vector<inference::ChatMessage> BuildRagConversation(
    const std::string& question, const std::vector<Source>& sources,
    const std::vector<inference::ChatMessage>& history = {}, bool answerability_checked = false);

// The same conversation up to the question (so the prefix cache serves the
// answer after it), asking whether the sources state the answer, to be
// replied "yes" or "no" (answerability.h).
std::vector<inference::ChatMessage> BuildAnswerabilityConversation(
    const std::string& question, const std::vector<Source>& sources,
    const std::vector<inference::ChatMessage>& history = {});

// The prompt text (without BOS) for a base model.
std::string BuildRagPrompt(const std::string& question, const std::vector<Source>& sources,
                           const std::vector<inference::ChatMessage>& history = {});

// Stop strings that end a base model's answer before it starts a new block.
const std::vector<std::string>& RagStopStrings();

// Every number inside the well-formed markers [n] and [n, m, ...] of
// `answer`, in order and with repeats, whether or not it names a source.
std::vector<long> CitationMarkerNumbers(const std::string& answer);

// The numbers n of the [n] (and [n, m]) markers in `answer` that refer to one
// of `n_sources` sources; markers pointing nowhere are ignored.
std::set<int> CitedNumbers(const std::string& answer, int n_sources);

// {"n","document_id","title","section","chunk_id","text","start","end",
// "score"} and "page" (PDF passages) for each source
// (all, or only those in `only` when given).
Json CitationsJson(const std::vector<Source>& sources, const std::set<int>* only = nullptr);

}  // namespace ragd::app
