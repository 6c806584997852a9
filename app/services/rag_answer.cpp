#include "app/services/rag_answer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>

#include "corpus/extract.h"
#include "retrieval/excerpt.h"
#include "retrieval/instructions.h"

namespace ragd::app {
namespace {

// Words that only a follow-up this short leaves for retrieval to work with,
// when it is not rewritten.
constexpr size_t kFollowUpMaxWords = 6;

// `english`: the search text was English (the embedding model's language).
// Otherwise the low cosines and the missing word overlap with the English
// corpus say little ("Wie sichere ich den Datenordner?" scored under the
// cut-off while the guide answers it), so such a search never abstains.
bool NothingRelevant(const std::vector<retrieval::SearchHit>& hits, const RagQuestion& q, bool english) {
  if (hits.empty()) return true;
  if (!english) return false;
  float dense = 0;
  double lexical = 0;
  for (const retrieval::SearchHit& h : hits) {
    if (h.dense_rank > 0) dense = std::max(dense, h.dense_score);
    if (h.lexical_rank > 0) lexical = std::max(lexical, h.lexical_score);
  }
  return dense < q.abstain_dense_below && lexical < q.abstain_lexical_below;
}

// The page each PDF passage starts on: PDF text separates its pages with a
// form feed (corpus/extract.h). Other documents have no pages (0).
Status FindPages(const corpus::Store& store, std::vector<Source>& sources) {
  std::map<corpus::DocumentId, std::string> pdf_texts;
  for (Source& s : sources) {
    auto it = pdf_texts.find(s.hit.document_id);
    if (it == pdf_texts.end()) {
      auto doc = store.GetDocument(s.hit.document_id);
      if (!doc.ok()) return doc.status();
      std::string text;
      if (doc->media_type == corpus::kMediaPdf) {
        auto t = store.GetDocumentText(s.hit.document_id);
        if (!t.ok()) return t.status();
        text = std::move(t).value();
      }
      it = pdf_texts.emplace(s.hit.document_id, std::move(text)).first;
    }
    if (it->second.empty()) continue;
    s.page = PageAt(it->second, s.hit.start);
  }
  return Status::Ok();
}

}  // namespace

int PageAt(std::string_view text, int64_t offset) {
  const auto end = text.begin() + std::clamp<int64_t>(offset, 0, static_cast<int64_t>(text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), end, '\f'));
}

void PutInstructionsToModelLast(std::vector<retrieval::SearchHit>& hits) {
  std::stable_partition(hits.begin(), hits.end(), [](const retrieval::SearchHit& h) {
    return retrieval::FindInstructionsToModel(h.text).empty();
  });
}

void ApplyRagConfig(const RagConfig& rag, RagQuestion* q) {
  q->abstain_dense_below = rag.abstain_dense_below;
  q->abstain_lexical_below = rag.abstain_lexical_below;
  q->whole_sources = static_cast<int>(rag.whole_sources);
  q->excerpt_bytes = static_cast<size_t>(rag.excerpt_bytes);
}

std::string SearchQuery(const RagQuestion& q) {
  if (!MayFollowUp(q.history, q.question, kFollowUpMaxWords)) return q.question;
  return LastUserTurn(q.history)->content + "\n" + q.question;
}

std::string AbstentionText(const std::string& question) {
  return DetectQuestionLanguage(question).abstention;
}

inference::SamplingOptions RagAnswerSampling() {
  inference::SamplingOptions s;
  s.temperature = 0;
  s.repeat_penalty = 1.1f;
  return s;
}

Result<RagAnswerPlan> PlanRagAnswer(const retrieval::Retriever& retriever, const inference::Engine& engine,
                                    const RagQuestion& q, inference::GenerationRequest request,
                                    Metrics* metrics) {
  RagAnswerPlan plan;
  plan.search_query = SearchQuery(q);
  if (q.standalone && MayFollowUp(q.history, q.question, kRewriteMaxWords)) {
    const auto t_rewrite = std::chrono::steady_clock::now();
    auto rewritten = q.standalone(q.history, q.question);
    plan.rewrite_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_rewrite).count();
    if (rewritten.ok()) {
      plan.rewritten = std::move(rewritten).value();
      plan.search_query = plan.rewritten;
    } else {
      std::fprintf(stderr, "ragd: searching the question without a rewrite: %s\n",
                   rewritten.status().message().c_str());
    }
  }
  // What the model answers.
  const std::string& question = plan.rewritten.empty() ? q.question : plan.rewritten;
  bool english = std::string_view(DetectQuestionLanguage(question).code) == "en";
  if (!english && q.to_english) {
    const auto t_translate = std::chrono::steady_clock::now();
    auto translated = q.to_english(plan.search_query);
    plan.translation_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_translate).count();
    if (translated.ok()) {
      plan.search_query = std::move(translated).value();
      plan.translated = english = true;
    } else {
      std::fprintf(stderr, "ragd: searching the question as asked: %s\n",
                   translated.status().message().c_str());
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  retrieval::SearchOptions opts;
  opts.top_k = q.top_k;
  opts.only_documents = q.only_documents;
  auto hits = retriever.Search(plan.search_query, opts);
  if (!hits.ok()) return hits.status();
  plan.retrieval_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (metrics != nullptr) metrics->ObserveRetrieval(plan.retrieval_ms / 1000.0);
  if (NothingRelevant(*hits, q, english)) {
    plan.abstention = AbstentionText(question);
    return plan;
  }
  PutInstructionsToModelLast(*hits);
  plan.sources = NumberSources(std::move(hits).value());
  if (q.whole_sources > 0) {
    for (size_t i = static_cast<size_t>(q.whole_sources); i < plan.sources.size(); ++i) {
      Source& s = plan.sources[i];
      s.excerpt = retrieval::QueryExcerpt(retrieval::WithoutInstructionsToModel(s.hit.text),
                                          plan.search_query, q.excerpt_bytes);
    }
  }
  // A document deleted since the search loses its pages, not the answer.
  (void)FindPages(retriever.store(), plan.sources);

  if (engine.chat_template() != inference::ChatTemplate::kNone) {
    // Only a model whose "yes" and "no" separate is asked (the one gate).
    if (q.answerable && q.abstain_answerability_below > 0 && AnswerabilityCheckSeparates(engine)) {
      auto ids = engine.FormatChat(BuildAnswerabilityConversation(question, plan.sources, q.history));
      if (!ids.ok()) return ids.status();
      const auto t_check = std::chrono::steady_clock::now();
      auto score = q.answerable(AnswerabilityRequest(std::move(ids).value()));
      plan.answerability_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_check).count();
      if (!score.ok()) {
        std::fprintf(stderr, "ragd: answering without the answerability check: %s\n",
                     score.status().message().c_str());
      } else {
        plan.answerability = *score;
        if (*score < q.abstain_answerability_below) {
          plan.abstention = AbstentionText(question);
          return plan;
        }
      }
    }
    auto ids = engine.FormatChat(BuildRagConversation(question, plan.sources, q.history,
                                                      /*answerability_checked=*/plan.answerability >= 0));
    if (!ids.ok()) return ids.status();
    request.prompt = std::move(ids).value();
  } else {
    auto ids = engine.PlainPrompt(BuildRagPrompt(question, plan.sources, q.history));
    if (!ids.ok()) return ids.status();
    request.prompt = std::move(ids).value();
    for (const std::string& s : RagStopStrings()) request.stop.push_back(s);
  }
  plan.request = std::move(request);
  return plan;
}

}  // namespace ragd::app
