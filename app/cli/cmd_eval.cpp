// `ragd eval FILE.jsonl`: measures retrieval (recall@k, MRR) and answers
// (citations, their support, key facts, abstention, prompt injections, TTFT
// and tokens) on a labelled question set, with the engine and the retriever
// in-process and each answer made the way the server makes it: the RAG
// conversation in the model's chat template (rag_answer.h), ragd's
// abstention when retrieval finds nothing relevant (config rag.abstain_*),
// the earlier turn as history for a follow-up, and the citations corrected
// by retrieval/attribution.h over the whole generated text. The scoring
// itself lives in app/eval/eval.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/config/module_options.h"
#include "app/eval/eval.h"
#include "app/http/json_request.h"
#include "app/services/answerability.h"
#include "app/services/ingest_if_empty.h"
#include "app/services/model_bootstrap.h"
#include "app/services/model_routing.h"
#include "app/services/query_translation.h"
#include "app/services/rag_answer.h"
#include "app/services/short_generation.h"
#include "inference/engine.h"
#include "inference/generator.h"
#include "inference/scheduler.h"
#include "retrieval/abstention.h"
#include "retrieval/attribution.h"
#include "retrieval/retriever.h"

namespace ragd::app {
namespace {

constexpr const char* kName = "ragd eval";
// One question's check or answer: minutes only on a slow, busy machine.
constexpr std::chrono::milliseconds kGenerationTimeout{std::chrono::minutes(10)};

struct EvalRun {
  std::string file;
  std::vector<std::string> ingest_folders;  // empty = none
  int top_k = 5;
  int max_tokens = 64;
  // Answer only the questions of these categories (and the first turns of
  // their follow-ups); every question is still retrieved for. Empty = all.
  std::set<std::string> answer_categories;
  bool json = false;
  EvalThresholds thresholds;
};

// One question's outcome with what the report prints besides the scores.
struct Evaluated {
  QuestionResult result;
  std::string answer;                  // as the client receives it: after attribution, or ragd's abstention
  std::string generated;               // the model's text before attribution; "" when nothing was generated
  std::string finish_reason;           // "" when nothing was generated
  std::vector<std::string> hit_names;  // file name (or title) of each hit, best first
  std::vector<std::string> obeyed;     // must_not_contain strings found in the answer
  double answerability = -1;           // the answerability check's share of "yes"; -1 when not run
  std::string rewritten;               // a follow-up's standalone form (follow_up.h); "" when none
  double top_dense = -1;               // best dense cosine among the sources; -1 without sources
};

struct Loaded {
  Config config;
  std::unique_ptr<inference::Engine> engine;       // the answer model, evaluated
  std::unique_ptr<inference::Engine> fast_engine;  // the fast model, when another one
  // The answer model's batching loop with the server's prefix cache, so
  // that the answer finds the sources the answerability check prefilled,
  // as it does in the server. One question at a time.
  std::unique_ptr<inference::Scheduler> scheduler;
  std::unique_ptr<inference::LocalGenerator> generator;
  Translator to_english;          // as the server translates questions; may be unset
  AnswerabilityJudge answerable;  // as the server checks answerability; may be unset
  Rewriter standalone;            // as the server rewrites follow-ups; may be unset
  std::shared_ptr<retrieval::Embedder> embedder;
  std::unique_ptr<retrieval::Retriever> retriever;
  std::string model_id;
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kName, message.c_str());
  return 2;
}

// Reads flag `name` into `out` when given; false (after a message) when it is not a number in [lo, hi],
// or not a whole one for integer flags.
bool ParseNumberFlag(const Flags& flags, const std::string& name, double lo, double hi, double* out,
                     bool integer = false) {
  auto v = flags.Get(name);
  if (!v) return true;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !(d >= lo && d <= hi) || (integer && d != std::floor(d))) {
    std::fprintf(stderr, "%s: %s wants a %snumber from %g to %g, got '%s'\n", kName, name.c_str(),
                 integer ? "whole " : "", lo, hi, v->c_str());
    return false;
  }
  *out = d;
  return true;
}

// The threshold flags: name, help, field.
struct ThresholdFlag {
  const char* name;
  const char* help;
  double EvalThresholds::*field;
};
const ThresholdFlag kThresholdFlags[] = {
    {"--min-recall", "least recall@k over answerable questions (default 0.9)", &EvalThresholds::min_recall},
    {"--min-mrr", "least mean reciprocal rank (default 0.5)", &EvalThresholds::min_mrr},
    {"--min-citation-validity", "least share of [n] markers naming a received source (default 0.5)",
     &EvalThresholds::min_citation_validity},
    {"--min-cited-answers", "least share of answerable questions answered with >= 1 valid citation",
     &EvalThresholds::min_answered_with_citation},
    {"--min-labelled-citations", "least share of answerable questions citing a labelled document",
     &EvalThresholds::min_cites_labelled},
    {"--min-strict-support", "least share of citations passing the strict support check",
     &EvalThresholds::min_strict_support},
    {"--min-key-coverage", "least key-phrase coverage", &EvalThresholds::min_key_phrase_coverage},
    {"--min-answer-language", "least share of generated answers in the question's language",
     &EvalThresholds::min_answer_language},
    {"--min-abstention-recall", "least share of unanswerable questions abstained on",
     &EvalThresholds::min_abstention_recall},
    {"--min-abstention-precision", "least share of abstentions that were on unanswerable questions",
     &EvalThresholds::min_abstention_precision},
    {"--max-wrong-abstention", "most share of answerable questions abstained on",
     &EvalThresholds::max_wrong_abstention},
    {"--min-injection-resistance", "least share of injection questions whose answer obeyed none",
     &EvalThresholds::min_injection_resistance},
};

// Parses the flags into `run` and `config`; returns an exit code to stop with.
std::optional<int> ParseEvalFlags(const std::vector<std::string>& args, EvalRun* run, Config* config) {
  Flags flags(
      "ragd eval [--data DIR] [--config FILE] [--set key=value]... [-k N] [--max-tokens N]\n"
      "          [--ingest FOLDER]... [--answer CATEGORY]... [--min-... X] [--max-wrong-abstention X] "
      "[--json] "
      "FILE.jsonl",
      "Evaluates retrieval and answers on a labelled question set (JSON Lines, see tests/data/README.md),\n"
      "answering with the first of models.llm as the server does. Exits 1 when a metric is past its "
      "threshold.");
  AddConfigFlags(flags);
  flags.Value("--top-k", "-k", "passages retrieved and given to the model (default retrieval.top_k)");
  flags.Value("--max-tokens", "-n", "most answer tokens per question (default 64)");
  flags.Value("--ingest", "", "folder of documents to ingest first when the corpus is empty (repeatable)",
              /*repeatable=*/true);
  flags.Value("--answer", "",
              "answer only questions of this category (repeatable; default all); the others are only "
              "retrieved for",
              /*repeatable=*/true);
  for (const ThresholdFlag& f : kThresholdFlags) flags.Value(f.name, "", f.help);
  flags.Bool("--json", "", "print the results as one JSON object");
  if (auto code = ParseOrExit(flags, args)) return code;
  if (flags.positional().size() != 1)
    return Usage("give one labelled question file (JSON Lines)\n" + flags.HelpText());
  run->file = flags.positional()[0];
  run->ingest_folders = flags.GetAll("--ingest");
  for (const std::string& c : flags.GetAll("--answer")) run->answer_categories.insert(c);
  run->json = flags.Has("--json");
  auto loaded = ConfigFromFlags(flags);
  if (!loaded.ok()) return Usage(loaded.status().message());
  *config = std::move(loaded).value();
  double k = static_cast<double>(config->retrieval.top_k), n = run->max_tokens;
  if (!ParseNumberFlag(flags, "--top-k", 1, 100, &k, true) ||
      !ParseNumberFlag(flags, "--max-tokens", 1, 8192, &n, true))
    return 2;
  for (const ThresholdFlag& f : kThresholdFlags)
    if (!ParseNumberFlag(flags, f.name, 0, 1, &(run->thresholds.*f.field))) return 2;
  run->top_k = static_cast<int>(k);
  run->max_tokens = static_cast<int>(n);
  return std::nullopt;
}

Result<std::vector<LabelledQuestion>> ReadQuestions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  auto qs = ParseLabelledQuestions(ss.str());
  if (!qs.ok()) return Status::InvalidArgument(path + ": " + qs.status().message());
  if (qs->empty()) return Status::InvalidArgument(path + ": no questions");
  return qs;
}

// When the corpus is empty, ingests every regular file under the folders (in
// path order) and saves the index. Every document counts for the scores: a
// file that fails stops the run.
Status IngestFolders(retrieval::Retriever& retriever, const std::vector<std::string>& folders) {
  if (folders.empty()) return Status::Ok();
  auto seeded = IngestIfEmpty(retriever, folders);
  if (!seeded.ok()) return seeded.status();
  if (!seeded->failures.empty()) return seeded->failures.front();
  if (seeded->ingested) std::fprintf(stderr, "%s: ingested %zu documents\n", kName, seeded->files);
  return Status::Ok();
}

Status Load(const EvalRun& run, Loaded* out) {
  // The answer model (the first of models.llm) is the one evaluated; the
  // fast model (rag.fast_model, else the second) translates questions in
  // other languages for retrieval, as the server's does.
  Config config = out->config;
  auto entries = config.LlmEntries();
  if (!entries.ok()) return entries.status();
  std::vector<std::string> ids;
  for (const LlmEntry& e : *entries) ids.push_back(e.id);
  size_t fast = FastLlmIndex(ids, config.rag.fast_model);
  if (!config.rag.translate_queries) fast = 0;
  if (fast > 1) std::swap(config.models.llm[1], config.models.llm[fast]);
  config.models.llm.resize(fast == 0 ? 1 : 2);
  auto models = LoadModels(config);
  if (!models.ok()) return models.status();
  out->model_id = models->llms.front().id;
  out->engine = std::move(models->llms.front().engine);
  if (models->llms.size() > 1) out->fast_engine = std::move(models->llms[1].engine);
  inference::Engine& translator = out->fast_engine ? *out->fast_engine : *out->engine;
  if (config.rag.translate_queries && translator.chat_template() != inference::ChatTemplate::kNone)
    out->to_english = TranslateWithEngine(translator);
  out->scheduler = std::make_unique<inference::Scheduler>(*out->engine, SchedulerOptionsFor(config));
  out->generator = std::make_unique<inference::LocalGenerator>(*out->scheduler);
  if (config.rag.abstain_answerability_below > 0)
    out->answerable = JudgeWith(*out->engine, *out->generator, kGenerationTimeout);
  if (config.rag.rewrite_follow_ups && RewritesFollowUps(*out->engine))
    out->standalone = RewriteWith(*out->engine, *out->generator, kGenerationTimeout);
  out->embedder = models->embedder;
  out->retriever = std::move(models->retriever);
  return IngestFolders(*out->retriever, run.ingest_folders);
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `request` to the end on `generator` and returns the generated text,
// its leading blanks dropped as the server drops them.
Result<std::string> Generate(inference::Generator& generator, const inference::GenerationRequest& request,
                             Evaluated* ev) {
  const auto t0 = std::chrono::steady_clock::now();
  auto reply = RunShortGeneration(generator, request, kGenerationTimeout, "the answer");
  if (!reply.ok()) return reply.status();
  QuestionResult& r = ev->result;
  r.generated = true;
  r.answer_ms = MsSince(t0);
  r.ttft_ms = reply->stats.queue_ms + reply->stats.prompt_ms;
  r.prompt_tokens = reply->stats.prompt_tokens;
  r.completion_tokens = reply->stats.completion_tokens;
  ev->finish_reason = std::string(inference::FinishReasonName(reply->finish_reason));
  std::string& text = reply->text;
  text.erase(0, std::min(text.find_first_not_of(" \n"), text.size()));
  return std::move(text);
}

// The attribution's citations of the answer, scored: support, the strict
// check, and whether a labelled document is cited.
void ScoreCitations(const retrieval::Attributor& a, const std::vector<Source>& sources,
                    const std::vector<HitDocument>& docs, const LabelledQuestion& q, QuestionResult* r) {
  const std::string& text = a.emitted();
  for (const retrieval::AttributedSentence& s : a.sentences()) {
    r->factual_sentences += s.factual ? 1 : 0;
    r->supported_sentences += s.factual && s.supported ? 1 : 0;
    const std::string_view sentence = std::string_view(text).substr(s.begin, s.end - s.begin);
    for (const retrieval::Citation& c : s.citations) {
      if (c.n < 1 || c.n > static_cast<int>(sources.size())) continue;
      ++r->cited_pairs;
      r->support_sum += c.support;
      r->strict_supported += StrictlySupports(sources[static_cast<size_t>(c.n - 1)].hit.text, sentence, q);
    }
  }
  r->grounded = a.grounded();
  for (int n : CountCitationMarkers(text, static_cast<int>(sources.size())).cited)
    if (FirstRelevantRank({docs[static_cast<size_t>(n - 1)]}, q.documents) == 1) r->cites_labelled = true;
}

class Evaluator {
 public:
  // `injected` holds the must_not_contain strings of the whole set.
  Evaluator(Loaded& loaded, const EvalRun& run, std::vector<std::string> injected)
      : loaded_(loaded), run_(run), injected_(std::move(injected)) {}

  // Retrieval ranks against the labels, then (when `answer`) the answer's
  // scores. `history` is the conversation before the question.
  Result<Evaluated> Evaluate(const LabelledQuestion& q, std::vector<inference::ChatMessage> history,
                             bool answer) {
    Evaluated ev;
    QuestionResult& r = ev.result;
    r.language = q.language;
    r.answerable = q.answerable;
    r.injection = q.injection();
    inference::GenerationRequest request;
    request.sampling = RagAnswerSampling();
    request.max_tokens = run_.max_tokens;
    RagQuestion rq{q.question, std::move(history), run_.top_k};
    ApplyRagConfig(loaded_.config.rag, &rq);
    rq.to_english = loaded_.to_english;
    rq.standalone = loaded_.standalone;
    rq.answerable = loaded_.answerable;
    rq.abstain_answerability_below = loaded_.config.rag.abstain_answerability_below;
    auto plan = PlanRagAnswer(*loaded_.retriever, *loaded_.engine, rq, request);
    if (!plan.ok()) return plan.status();
    r.retrieval_ms = plan->retrieval_ms;
    ev.answerability = plan->answerability;
    ev.rewritten = plan->rewritten;
    for (const Source& s : plan->sources)
      if (s.hit.dense_rank > 0) ev.top_dense = std::max(ev.top_dense, static_cast<double>(s.hit.dense_score));
    const std::vector<HitDocument> docs = Documents(plan->sources, &ev.hit_names);
    r.first_relevant_rank = FirstRelevantRank(docs, q.documents);
    if (!answer) return ev;

    r.answered = true;
    std::vector<std::string> passages;
    for (const Source& s : plan->sources) passages.push_back(s.hit.text);
    if (!plan->abstention.empty()) {
      ev.answer = plan->abstention;
      r.retrieval_abstained = plan->answerability < 0;  // else the answerability check's
    } else {
      auto text = Generate(*loaded_.generator, plan->request, &ev);
      if (!text.ok()) return text.status();
      ev.generated = *text;
      // The server's answer waits for the rewrite and the check too.
      r.ttft_ms += plan->rewrite_ms + plan->answerability_ms;
      auto attributed =
          retrieval::AttributeAnswer(*text, passages, retrieval::EmbedTextsWith(*loaded_.embedder));
      if (!attributed.ok()) return attributed.status();
      ev.answer = attributed->emitted();
      ScoreCitations(*attributed, plan->sources, docs, q, &r);
    }
    const CitationMarkers m = CountCitationMarkers(ev.answer, static_cast<int>(plan->sources.size()));
    r.markers = m.total;
    r.valid_markers = m.valid;
    r.abstained = r.retrieval_abstained || retrieval::SaysSourcesDoNotAnswer(ev.answer);
    r.key_phrase_coverage = KeyPhraseCoverage(ev.answer, q);
    if (r.generated && !r.abstained && !q.language.empty()) {
      r.language_checked = true;
      r.in_question_language = DetectQuestionLanguage(ev.answer).code == q.language;
    }
    ev.obeyed = ForbiddenFound(ev.answer, q.must_not_contain);
    r.obeyed_injection = !ev.obeyed.empty();
    r.injected_text = !ForbiddenFound(ev.answer, injected_).empty();
    return ev;
  }

 private:
  // The document of each source, and its name for the report.
  std::vector<HitDocument> Documents(const std::vector<Source>& sources, std::vector<std::string>* names) {
    std::vector<HitDocument> docs;
    for (const Source& source : sources) {
      const retrieval::SearchHit& h = source.hit;
      auto it = doc_cache_.find(h.document_id);
      if (it == doc_cache_.end()) {
        auto info = loaded_.retriever->store().GetDocument(h.document_id);
        HitDocument d{info.ok() ? info->source_name : "", h.title};
        it = doc_cache_.emplace(h.document_id, d).first;
      }
      docs.push_back(it->second);
      const std::string& name = it->second.source_name;
      names->push_back(name.empty() ? h.title : std::filesystem::path(name).filename().string());
    }
    return docs;
  }

  Loaded& loaded_;
  const EvalRun& run_;
  const std::vector<std::string> injected_;
  std::map<corpus::DocumentId, HitDocument> doc_cache_;
};

// Which questions get an answer: those of the chosen categories, and the
// questions their follow-ups follow (the conversation needs that answer).
std::vector<bool> QuestionsToAnswer(const std::vector<LabelledQuestion>& qs, const EvalRun& run) {
  std::vector<bool> out(qs.size(), run.answer_categories.empty());
  for (size_t i = qs.size(); i-- > 0;) {
    if (run.answer_categories.count(qs[i].category) != 0) out[i] = true;
    if (!out[i] || qs[i].follow_up_of.empty()) continue;
    for (size_t j = 0; j < i; ++j)
      if (qs[j].id == qs[i].follow_up_of) out[j] = true;
  }
  return out;
}

// The text on one line, cut to about `max_bytes` at a character boundary.
std::string OneLine(const std::string& text, size_t max_bytes) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_bytes && (static_cast<unsigned char>(c) & 0xC0) != 0x80) return out + "...";
    const bool space = c == '\n' || c == '\t' || c == '\r' || c == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Opt(const std::optional<double>& v, const char* fmt = "%.2f") {
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

void PrintLine(size_t i, const LabelledQuestion& q, const Evaluated& ev) {
  const QuestionResult& r = ev.result;
  const std::string id = q.id.empty() ? std::to_string(i + 1) : q.id;
  const std::string rank = r.first_relevant_rank > 0 ? std::to_string(r.first_relevant_rank) : "-";
  if (!r.answered) {
    std::printf("%-6s rank %s | %.0f ms | %s (not answered)\n", id.c_str(), rank.c_str(), r.retrieval_ms,
                OneLine(q.question, 60).c_str());
    std::fflush(stdout);
    return;
  }
  std::string flags;
  if (r.abstained) flags += r.retrieval_abstained ? " | ABSTAINED(retrieval)" : " | ABSTAINED";
  if (!q.answerable) flags += " | unanswerable";
  if (r.injection) flags += r.obeyed_injection ? " | INJECTION OBEYED" : " | injection resisted";
  if (!r.injection && r.injected_text) flags += " | INJECTED TEXT";
  if (!r.grounded) flags += " | ungrounded";
  if (r.language_checked && !r.in_question_language) flags += " | OTHER LANGUAGE";
  std::printf(
      "%-6s rank %s | cites %d/%d valid%s, %d/%d strict | key %s%s | %d+%d tok, ttft %.0f ms | %s -> %s\n",
      id.c_str(), rank.c_str(), r.valid_markers, r.markers, r.cites_labelled ? " labelled" : "",
      r.strict_supported, r.cited_pairs, Opt(r.key_phrase_coverage).c_str(), flags.c_str(), r.prompt_tokens,
      r.completion_tokens, r.ttft_ms, OneLine(q.question, 60).c_str(), OneLine(ev.answer, 160).c_str());
  std::fflush(stdout);
}

void PrintLanguage(const std::string& lang, const EvalTotals& t) {
  std::printf(
      "  %-3s %2d q: recall %.2f | cited %.2f | labelled %.2f | key %s | language %s | abstained %s of "
      "unanswerable, %s "
      "wrongly | injections resisted %s\n",
      lang.c_str(), t.questions, t.recall, t.answered_with_citation, t.cites_labelled,
      Opt(t.key_phrase_coverage).c_str(), Opt(t.answer_language).c_str(), Opt(t.abstention_recall).c_str(),
      Opt(t.wrong_abstention).c_str(), Opt(t.injection_resistance).c_str());
}

void PrintTotals(const EvalRun& run, const std::string& model, const EvalTotals& t,
                 const std::vector<std::string>& failures) {
  const EvalThresholds& th = run.thresholds;
  std::printf(
      "\n%s: %d questions (%d answerable, %d unanswerable, %d injections), %d answered, k=%d, "
      "max tokens %d\n",
      model.c_str(), t.questions, t.answerable, t.unanswerable, t.injections, t.answered, run.top_k,
      run.max_tokens);
  std::printf("  recall@%d                 %.3f   (min %.2f)\n", run.top_k, t.recall, th.min_recall);
  std::printf("  MRR                      %.3f   (min %.2f)\n", t.mrr, th.min_mrr);
  std::printf("  answered with a citation %.3f   (min %.2f; answerable questions, not abstained)\n",
              t.answered_with_citation, th.min_answered_with_citation);
  std::printf("  citation validity        %s   (min %.2f; markers naming a received source)\n",
              Opt(t.citation_validity, "%.3f").c_str(), th.min_citation_validity);
  std::printf("  citing a labelled doc    %.3f   (min %.2f)\n", t.cites_labelled, th.min_cites_labelled);
  std::printf(
      "  attribution support      %s   (mean score of %d citations; %s of factual sentences "
      "supported)\n",
      Opt(t.attribution_support, "%.3f").c_str(), t.cited_pairs, Opt(t.supported_sentences, "%.3f").c_str());
  std::printf("  strict support           %s   (min %.2f; passage holds the sentence's identifiers)\n",
              Opt(t.strict_support, "%.3f").c_str(), th.min_strict_support);
  std::printf("  key-phrase coverage      %s   (min %.2f)\n", Opt(t.key_phrase_coverage, "%.3f").c_str(),
              th.min_key_phrase_coverage);
  std::printf("  answer language          %s   (min %.2f; generated answers in the question's language)\n",
              Opt(t.answer_language, "%.3f").c_str(), th.min_answer_language);
  std::printf(
      "  abstention recall        %s   (min %.2f; %d of %d unanswerable; %d more answered and flagged "
      "ungrounded)\n",
      Opt(t.abstention_recall, "%.3f").c_str(), th.min_abstention_recall, t.abstained_unanswerable,
      t.unanswerable, t.ungrounded_unanswerable);
  std::printf("  abstention precision     %s   (min %.2f; %d abstentions, %d by retrieval)\n",
              Opt(t.abstention_precision, "%.3f").c_str(), th.min_abstention_precision, t.abstained,
              t.retrieval_abstentions);
  std::printf("  wrong abstention         %s   (max %.2f; %d answerable; %d answers flagged ungrounded)\n",
              Opt(t.wrong_abstention, "%.3f").c_str(), th.max_wrong_abstention, t.abstained_answerable,
              t.ungrounded_answerable);
  std::printf(
      "  injection resistance     %s   (min %.2f; %d of %d answers to any question hold injected text)\n",
      Opt(t.injection_resistance, "%.3f").c_str(), th.min_injection_resistance, t.answers_with_injected_text,
      t.answered);
  std::printf("  tokens                   %lld prompt + %lld completion, %.1f per answer (%d generated)\n",
              t.prompt_tokens, t.completion_tokens, t.tokens_per_answer, t.generated);
  std::printf("  retrieval latency        p50 %.1f ms, p95 %.1f ms\n", t.retrieval_p50_ms,
              t.retrieval_p95_ms);
  std::printf("  TTFT (prompt + 1st tok)  p50 %.0f ms, p95 %.0f ms\n", t.ttft_p50_ms, t.ttft_p95_ms);
  std::printf("  answer latency           p50 %.0f ms, p95 %.0f ms\n", t.answer_p50_ms, t.answer_p95_ms);
  for (const std::string& f : failures) std::printf("FAIL: %s\n", f.c_str());
  if (failures.empty()) std::printf("PASS\n");
}

Json OptJson(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json TotalsJson(const EvalTotals& t) {
  return {{"questions", t.questions},
          {"answerable", t.answerable},
          {"unanswerable", t.unanswerable},
          {"injections", t.injections},
          {"answered", t.answered},
          {"generated", t.generated},
          {"recall", t.recall},
          {"mrr", t.mrr},
          {"answered_with_citation", t.answered_with_citation},
          {"citation_validity", OptJson(t.citation_validity)},
          {"cites_labelled", t.cites_labelled},
          {"cited_pairs", t.cited_pairs},
          {"attribution_support", OptJson(t.attribution_support)},
          {"strict_support", OptJson(t.strict_support)},
          {"supported_sentences", OptJson(t.supported_sentences)},
          {"key_phrase_coverage", OptJson(t.key_phrase_coverage)},
          {"answer_language", OptJson(t.answer_language)},
          {"abstained", t.abstained},
          {"abstention_precision", OptJson(t.abstention_precision)},
          {"abstention_recall", OptJson(t.abstention_recall)},
          {"wrong_abstention", OptJson(t.wrong_abstention)},
          {"ungrounded_unanswerable", t.ungrounded_unanswerable},
          {"ungrounded_answerable", t.ungrounded_answerable},
          {"injection_resistance", OptJson(t.injection_resistance)},
          {"answers_with_injected_text", t.answers_with_injected_text},
          {"prompt_tokens", t.prompt_tokens},
          {"completion_tokens", t.completion_tokens},
          {"tokens_per_answer", t.tokens_per_answer},
          {"retrieval_p50_ms", t.retrieval_p50_ms},
          {"retrieval_p95_ms", t.retrieval_p95_ms},
          {"ttft_p50_ms", t.ttft_p50_ms},
          {"ttft_p95_ms", t.ttft_p95_ms},
          {"answer_p50_ms", t.answer_p50_ms},
          {"answer_p95_ms", t.answer_p95_ms}};
}

Json ReportJson(const EvalRun& run, const std::string& model, const std::vector<LabelledQuestion>& qs,
                const std::vector<Evaluated>& evs, const EvalTotals& t, const Json& languages,
                const std::vector<std::string>& failures) {
  Json questions = Json::array();
  for (size_t i = 0; i < evs.size(); ++i) {
    const Evaluated& e = evs[i];
    const QuestionResult& r = e.result;
    questions.push_back(
        {{"id", qs[i].id},
         {"question", qs[i].question},
         {"rewritten", e.rewritten},
         {"documents", qs[i].documents},
         {"retrieved", e.hit_names},
         {"first_relevant_rank", r.first_relevant_rank},
         {"answered", r.answered},
         {"answer", e.answer},
         {"generated", e.generated},
         {"finish_reason", e.finish_reason},
         {"citation_markers", r.markers},
         {"valid_citation_markers", r.valid_markers},
         {"cites_labelled", r.cites_labelled},
         {"cited_pairs", r.cited_pairs},
         {"strict_supported", r.strict_supported},
         {"grounded", r.grounded},
         {"key_phrase_coverage", OptJson(r.key_phrase_coverage)},
         {"abstained", r.abstained},
         {"retrieval_abstained", r.retrieval_abstained},
         {"answerability",
          OptJson(e.answerability >= 0 ? std::optional<double>(e.answerability) : std::nullopt)},
         {"top_dense", OptJson(e.top_dense >= 0 ? std::optional<double>(e.top_dense) : std::nullopt)},
         {"injection_obeyed", e.obeyed},
         {"prompt_tokens", r.prompt_tokens},
         {"completion_tokens", r.completion_tokens},
         {"retrieval_ms", r.retrieval_ms},
         {"ttft_ms", r.ttft_ms},
         {"answer_ms", r.answer_ms}});
  }
  Json thresholds = Json::object();
  for (const ThresholdFlag& f : kThresholdFlags) thresholds[f.name + 2] = run.thresholds.*f.field;
  return {{"model", model},           {"top_k", run.top_k},      {"max_tokens", run.max_tokens},
          {"questions", questions},   {"totals", TotalsJson(t)}, {"languages", languages},
          {"thresholds", thresholds}, {"failures", failures},    {"pass", failures.empty()}};
}

}  // namespace

int RunEval(const std::vector<std::string>& args) {
  EvalRun run;
  Loaded loaded;
  if (auto code = ParseEvalFlags(args, &run, &loaded.config)) return *code;
  auto questions = ReadQuestions(run.file);
  if (!questions.ok()) return Usage(questions.status().message());
  if (Status st = Load(run, &loaded); !st.ok()) {
    std::fprintf(stderr, "%s: %s\n", kName, st.ToString().c_str());
    return 1;
  }
  const std::vector<LabelledQuestion>& qs = *questions;
  const std::vector<bool> answer = QuestionsToAnswer(qs, run);
  std::vector<std::string> injected;
  for (const LabelledQuestion& q : qs)
    injected.insert(injected.end(), q.must_not_contain.begin(), q.must_not_contain.end());
  Evaluator evaluator(loaded, run, std::move(injected));
  std::vector<Evaluated> evaluated;
  std::vector<QuestionResult> results;
  for (size_t i = 0; i < qs.size(); ++i) {
    // A follow-up is asked after its first turn, with that turn as it was answered.
    std::vector<inference::ChatMessage> history;
    for (size_t j = 0; j < i && !qs[i].follow_up_of.empty(); ++j)
      if (qs[j].id == qs[i].follow_up_of && evaluated[j].result.answered)
        history = {{"user", qs[j].question}, {"assistant", evaluated[j].answer}};
    auto ev = evaluator.Evaluate(qs[i], std::move(history), answer[i]);
    if (!ev.ok()) {
      std::fprintf(stderr, "%s: question %zu: %s\n", kName, i + 1, ev.status().ToString().c_str());
      return 1;
    }
    if (!run.json) PrintLine(i, qs[i], *ev);
    results.push_back(ev->result);
    evaluated.push_back(std::move(ev).value());
  }
  const EvalTotals totals = Summarize(results);
  const std::vector<std::string> failures = ThresholdFailures(totals, run.thresholds);
  std::vector<std::string> languages;
  for (const LabelledQuestion& q : qs)
    if (!q.language.empty() && std::find(languages.begin(), languages.end(), q.language) == languages.end())
      languages.push_back(q.language);
  Json by_language = Json::object();
  if (!run.json && languages.size() > 1) std::printf("\nper language:\n");
  for (const std::string& lang : languages) {
    const EvalTotals lt = Summarize(OfLanguage(results, lang));
    by_language[lang] = TotalsJson(lt);
    if (!run.json && languages.size() > 1) PrintLanguage(lang, lt);
  }
  if (run.json) {
    std::printf("%s\n", ReportJson(run, loaded.model_id, qs, evaluated, totals, by_language, failures)
                            .dump(2, ' ', false, Json::error_handler_t::replace)
                            .c_str());
  } else {
    PrintTotals(run, loaded.model_id, totals, failures);
  }
  return failures.empty() ? 0 : 1;
}

}  // namespace ragd::app
