// `ragd eval FILE.jsonl`: measures retrieval (recall@k, MRR) and answers
// (citations, key phrases, tokens, latency) on a labelled question set, with
// the engine and the retriever in-process and answers made the way /v1/ask
// makes them. The scoring itself lives in app/eval/eval.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/eval/eval.h"
#include "app/http/json_request.h"
#include "app/services/ingest_if_empty.h"
#include "app/services/model_bootstrap.h"
#include "app/services/rag_answer.h"
#include "inference/engine.h"
#include "retrieval/retriever.h"

namespace ragd::app {
namespace {

constexpr const char* kName = "ragd eval";

struct EvalRun {
  std::string file;
  std::string ingest_folder;  // "" = none
  int top_k = 5;
  int max_tokens = 64;
  bool json = false;
  EvalThresholds thresholds;
};

// One question's outcome with what the report prints besides the scores.
struct Evaluated {
  QuestionResult result;
  std::string answer;
  std::string finish_reason;
  std::vector<std::string> hit_names;  // file name (or title) of each hit, best first
  int markers = 0, valid_markers = 0, cited = 0, supported = 0;
};

struct Loaded {
  Config config;
  std::unique_ptr<inference::Engine> engine;
  std::unique_ptr<retrieval::Retriever> retriever;
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

// Parses the flags into `run` and `config`; returns an exit code to stop with.
std::optional<int> ParseEvalFlags(const std::vector<std::string>& args, EvalRun* run, Config* config) {
  Flags flags(
      "ragd eval [--data DIR] [--config FILE] [--set key=value]... [-k N] [--max-tokens N]\n"
      "          [--ingest FOLDER] [--min-recall X] [--min-mrr X] [--min-citation-validity X] [--json] "
      "FILE.jsonl",
      "Evaluates retrieval and answers on a labelled question set (JSON Lines: question, documents,\n"
      "key_phrases). Exits 1 when a metric is under its threshold.");
  AddConfigFlags(flags);
  flags.Value("--top-k", "-k", "passages retrieved and given to the model (default retrieval.top_k)");
  flags.Value("--max-tokens", "-n", "most answer tokens per question (default 64)");
  flags.Value("--ingest", "", "folder of documents to ingest first when the corpus is empty");
  flags.Value("--min-recall", "", "least recall@k (default 0.9)");
  flags.Value("--min-mrr", "", "least mean reciprocal rank (default 0.5)");
  flags.Value("--min-citation-validity", "",
              "least citation validity over answers with markers (default 0.5)");
  flags.Bool("--json", "", "print the results as one JSON object");
  if (auto code = ParseOrExit(flags, args)) return code;
  if (flags.positional().size() != 1)
    return Usage("give one labelled question file (JSON Lines)\n" + flags.HelpText());
  run->file = flags.positional()[0];
  run->ingest_folder = flags.Get("--ingest").value_or("");
  run->json = flags.Has("--json");
  auto loaded = ConfigFromFlags(flags);
  if (!loaded.ok()) return Usage(loaded.status().message());
  *config = std::move(loaded).value();
  double k = static_cast<double>(config->retrieval.top_k), n = run->max_tokens;
  EvalThresholds& t = run->thresholds;
  if (!ParseNumberFlag(flags, "--top-k", 1, 100, &k, true) ||
      !ParseNumberFlag(flags, "--max-tokens", 1, 8192, &n, true) ||
      !ParseNumberFlag(flags, "--min-recall", 0, 1, &t.min_recall) ||
      !ParseNumberFlag(flags, "--min-mrr", 0, 1, &t.min_mrr) ||
      !ParseNumberFlag(flags, "--min-citation-validity", 0, 1, &t.min_citation_validity)) {
    return 2;
  }
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

Status Load(const EvalRun& run, Loaded* out) {
  // The answer model (the first of models.llm) is the one evaluated.
  Config config = out->config;
  config.models.llm.resize(1);
  auto models = LoadModels(config);
  if (!models.ok()) return models.status();
  out->engine = std::move(models->llms.front().engine);
  out->retriever = std::move(models->retriever);
  if (run.ingest_folder.empty()) return Status::Ok();
  // Every document counts for the scores: a file that fails stops the run.
  auto seeded = IngestIfEmpty(*out->retriever, run.ingest_folder);
  if (!seeded.ok()) return seeded.status();
  if (!seeded->failures.empty()) return seeded->failures.front();
  if (seeded->ingested)
    std::fprintf(stderr, "%s: ingested %zu documents from %s\n", kName, seeded->files,
                 run.ingest_folder.c_str());
  return Status::Ok();
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `request` to the end on the engine (no scheduler: one question at a time).
Status Answer(inference::Engine& engine, const inference::GenerationRequest& request, Evaluated* ev) {
  const auto t0 = std::chrono::steady_clock::now();
  auto gen = engine.Start(request);
  if (!gen.ok()) return gen.status();
  while (true) {
    auto chunk = (*gen)->Next();
    if (!chunk.ok()) return chunk.status();
    if (!*chunk) break;
    ev->answer += (*chunk)->text;
  }
  ev->result.answer_ms = MsSince(t0);
  ev->result.prompt_tokens = (*gen)->stats().prompt_tokens;
  ev->result.completion_tokens = (*gen)->stats().completion_tokens;
  ev->finish_reason = std::string(inference::FinishReasonName((*gen)->finish_reason()));
  return Status::Ok();
}

// Retrieval ranks against the labels, then the answer's scores.
Result<Evaluated> EvaluateOne(Loaded& loaded, const LabelledQuestion& q, const EvalRun& run,
                              std::map<corpus::DocumentId, HitDocument>* doc_cache) {
  Evaluated ev;
  // The answer as /v1/ask makes it (rag_answer.h), with this run's length limit.
  inference::GenerationRequest request;
  request.sampling = RagAnswerSampling();
  request.max_tokens = run.max_tokens;
  auto plan = PlanRagAnswer(*loaded.retriever, *loaded.engine, {q.question, {}, run.top_k}, request);
  if (!plan.ok()) return plan.status();
  ev.result.retrieval_ms = plan->retrieval_ms;
  std::vector<HitDocument> docs;
  for (const Source& source : plan->sources) {
    const retrieval::SearchHit& h = source.hit;
    auto it = doc_cache->find(h.document_id);
    if (it == doc_cache->end()) {
      auto info = loaded.retriever->store().GetDocument(h.document_id);
      HitDocument d{info.ok() ? info->source_name : "", h.title};
      it = doc_cache->emplace(h.document_id, d).first;
    }
    docs.push_back(it->second);
    const std::string& name = it->second.source_name;
    ev.hit_names.push_back(name.empty() ? h.title : std::filesystem::path(name).filename().string());
  }
  ev.result.first_relevant_rank = FirstRelevantRank(docs, q.documents);

  const std::vector<Source>& sources = plan->sources;
  RAGD_RETURN_IF_ERROR(Answer(*loaded.engine, plan->request, &ev));
  const CitationMarkers m = CountCitationMarkers(ev.answer, static_cast<int>(sources.size()));
  ev.markers = m.total;
  ev.valid_markers = m.valid;
  ev.result.citation_validity = CitationValidity(m);
  for (int n : m.cited) {
    const Source& s = sources[static_cast<size_t>(n - 1)];
    ev.supported += PassageSupports(s.hit.title + "\n" + s.hit.text, ev.answer, q.key_phrases) ? 1 : 0;
  }
  ev.cited = static_cast<int>(m.cited.size());
  if (ev.cited > 0) ev.result.citation_support = static_cast<double>(ev.supported) / ev.cited;
  ev.result.key_phrase_coverage = KeyPhraseCoverage(ev.answer, q.key_phrases);
  ev.result.not_in_sources = SaysNotInSources(ev.answer);
  return ev;
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
  std::printf(
      "%2zu. rank %s | cites %d/%d valid, %d/%d supported | key %s%s | %d+%d tok | %.0f+%.0f ms | %s -> %s\n",
      i + 1, r.first_relevant_rank > 0 ? std::to_string(r.first_relevant_rank).c_str() : "-",
      ev.valid_markers, ev.markers, ev.supported, ev.cited, Opt(r.key_phrase_coverage).c_str(),
      r.not_in_sources ? " | not-in-sources" : "", r.prompt_tokens, r.completion_tokens, r.retrieval_ms,
      r.answer_ms, OneLine(q.question, 60).c_str(), OneLine(ev.answer, 140).c_str());
  std::fflush(stdout);
}

void PrintTotals(const EvalRun& run, const EvalTotals& t, const std::vector<std::string>& failures) {
  std::printf("\n%d questions, k=%d, max tokens %d\n", t.questions, run.top_k, run.max_tokens);
  std::printf("  recall@%d            %.3f   (min %.2f)\n", run.top_k, t.recall, run.thresholds.min_recall);
  std::printf("  MRR                 %.3f   (min %.2f)\n", t.mrr, run.thresholds.min_mrr);
  std::printf("  citation validity   %s   (min %.2f; over %d answers with [n] markers)\n",
              Opt(t.citation_validity, "%.3f").c_str(), run.thresholds.min_citation_validity,
              t.answers_with_markers);
  std::printf("  citation support    %s   (over %d answers citing a source)\n",
              Opt(t.citation_support, "%.3f").c_str(), t.answers_citing);
  std::printf("  key-phrase coverage %s\n", Opt(t.key_phrase_coverage, "%.3f").c_str());
  std::printf("  not-in-sources      %d of %d answers\n", t.not_in_sources, t.questions);
  std::printf("  tokens              %lld prompt + %lld completion\n", t.prompt_tokens, t.completion_tokens);
  std::printf("  retrieval latency   p50 %.1f ms, p95 %.1f ms\n", t.retrieval_p50_ms, t.retrieval_p95_ms);
  std::printf("  answer latency      p50 %.0f ms, p95 %.0f ms\n", t.answer_p50_ms, t.answer_p95_ms);
  for (const std::string& f : failures) std::printf("FAIL: %s\n", f.c_str());
  if (failures.empty()) std::printf("PASS\n");
}

Json OptJson(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json ReportJson(const EvalRun& run, const std::vector<LabelledQuestion>& qs,
                const std::vector<Evaluated>& evs, const EvalTotals& t,
                const std::vector<std::string>& failures) {
  Json questions = Json::array();
  for (size_t i = 0; i < evs.size(); ++i) {
    const Evaluated& e = evs[i];
    const QuestionResult& r = e.result;
    questions.push_back({{"question", qs[i].question},
                         {"documents", qs[i].documents},
                         {"retrieved", e.hit_names},
                         {"first_relevant_rank", r.first_relevant_rank},
                         {"answer", e.answer},
                         {"finish_reason", e.finish_reason},
                         {"citation_markers", e.markers},
                         {"valid_citation_markers", e.valid_markers},
                         {"cited_sources", e.cited},
                         {"supported_sources", e.supported},
                         {"citation_validity", OptJson(r.citation_validity)},
                         {"citation_support", OptJson(r.citation_support)},
                         {"key_phrase_coverage", OptJson(r.key_phrase_coverage)},
                         {"not_in_sources", r.not_in_sources},
                         {"prompt_tokens", r.prompt_tokens},
                         {"completion_tokens", r.completion_tokens},
                         {"retrieval_ms", r.retrieval_ms},
                         {"answer_ms", r.answer_ms}});
  }
  Json totals = {{"questions", t.questions},
                 {"recall", t.recall},
                 {"mrr", t.mrr},
                 {"answers_with_markers", t.answers_with_markers},
                 {"citation_validity", OptJson(t.citation_validity)},
                 {"answers_citing", t.answers_citing},
                 {"citation_support", OptJson(t.citation_support)},
                 {"key_phrase_coverage", OptJson(t.key_phrase_coverage)},
                 {"not_in_sources", t.not_in_sources},
                 {"prompt_tokens", t.prompt_tokens},
                 {"completion_tokens", t.completion_tokens},
                 {"retrieval_p50_ms", t.retrieval_p50_ms},
                 {"retrieval_p95_ms", t.retrieval_p95_ms},
                 {"answer_p50_ms", t.answer_p50_ms},
                 {"answer_p95_ms", t.answer_p95_ms}};
  Json thresholds = {{"min_recall", run.thresholds.min_recall},
                     {"min_mrr", run.thresholds.min_mrr},
                     {"min_citation_validity", run.thresholds.min_citation_validity}};
  return {{"top_k", run.top_k},      {"max_tokens", run.max_tokens}, {"questions", questions},
          {"totals", totals},        {"thresholds", thresholds},     {"failures", failures},
          {"pass", failures.empty()}};
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
  std::map<corpus::DocumentId, HitDocument> doc_cache;
  std::vector<Evaluated> evaluated;
  std::vector<QuestionResult> results;
  for (size_t i = 0; i < questions->size(); ++i) {
    auto ev = EvaluateOne(loaded, (*questions)[i], run, &doc_cache);
    if (!ev.ok()) {
      std::fprintf(stderr, "%s: question %zu: %s\n", kName, i + 1, ev.status().ToString().c_str());
      return 1;
    }
    if (!run.json) PrintLine(i, (*questions)[i], *ev);
    results.push_back(ev->result);
    evaluated.push_back(std::move(ev).value());
  }
  const EvalTotals totals = Summarize(results);
  const std::vector<std::string> failures = ThresholdFailures(totals, run.thresholds);
  if (run.json) {
    std::printf("%s\n", ReportJson(run, *questions, evaluated, totals, failures)
                            .dump(2, ' ', false, Json::error_handler_t::replace)
                            .c_str());
  } else {
    PrintTotals(run, totals, failures);
  }
  return failures.empty() ? 0 : 1;
}

}  // namespace ragd::app
