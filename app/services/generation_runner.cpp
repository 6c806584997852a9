#include "app/services/generation_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <span>

#include "app/services/answerability.h"
#include "app/services/follow_up.h"
#include "app/services/model_routing.h"
#include "retrieval/attribution.h"

namespace ragd::app {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string NewId(const char* prefix) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* kAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % 62];
  return id;
}

// Per sentence of an attributed answer: its byte span in the text sent, its
// citations with their support scores, and whether the sources support it.
Json AttributionJson(const retrieval::Attributor& a) {
  Json sentences = Json::array();
  for (const retrieval::AttributedSentence& s : a.sentences()) {
    if (s.code) continue;
    Json cites = Json::array();
    for (const retrieval::Citation& c : s.citations) cites.push_back({{"n", c.n}, {"support", c.support}});
    sentences.push_back({{"start", s.begin},
                         {"end", s.end},
                         {"citations", cites},
                         {"factual", s.factual},
                         {"supported", s.supported}});
  }
  return {{"grounded", a.grounded()}, {"sentences", sentences}};
}

std::string FinishName(inference::FinishReason r) {
  return r == inference::FinishReason::kLength ? "length" : "stop";
}

// Everything one running request needs on the inference thread.
struct RunState {
  AppContext* ctx = nullptr;
  GenerationPlan plan;
  std::shared_ptr<AsyncResponse> response;
  Admission admission;
  int64_t user_id = 0;
  std::string request_id;
  Reply reply;            // what the wire format writes; reply.text is the answer so far, as sent
  std::string generated;  // the model's text so far (before attribution)
  Clock::time_point start, first_token, last_token;
  bool got_first = false;
  std::mutex mu;  // held by the submitting thread until `response` is set up
  // RAG answers: each finished sentence checked against the sources (see
  // citation attribution in retrieval/attribution.h), on ctx->attribution.
  // Touched only by tasks of that queue, which run in order; null when the
  // sources could not be embedded (the answer then streams as generated).
  std::unique_ptr<retrieval::Attributor> attributor;

  Json Usage(const inference::GenerationStats& s) const {
    return {{"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.completion_tokens},
            {"total_tokens", s.prompt_tokens + s.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", s.cached_tokens}}}};
  }

  Json Timings(const inference::GenerationStats& s) const {
    const auto per_s = [](int n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; };
    return {{"cache_n", s.cached_tokens},
            {"prompt_n", s.prompt_tokens - s.cached_tokens},
            {"prompt_ms", s.prompt_ms},
            {"prompt_per_second", per_s(s.prompt_tokens - s.cached_tokens, s.prompt_ms)},
            {"predicted_n", s.completion_tokens},
            {"predicted_ms", s.decode_ms},
            {"predicted_per_second", per_s(std::max(0, s.completion_tokens - 1), s.decode_ms)},
            {"draft_n", s.draft_tokens},
            {"draft_n_accepted", s.draft_accepted},
            {"queue_ms", s.queue_ms},
            {"retrieval_ms", plan.retrieval_ms},
            {"translation_ms", plan.translation_ms},
            {"answerability_ms", plan.answerability_ms},
            {"rewrite_ms", plan.rewrite_ms}};
  }

  ReplyEnd End(const std::string& finish, const inference::GenerationStats& stats) const {
    return {finish, Usage(stats), Timings(stats)};
  }

  void SendEvent(const Json& j) { response->Write("data: " + DumpJson(j) + "\n\n"); }

  void StartStream() {
    response->StartStream(200, "text/event-stream; charset=utf-8");
    for (const Json& event : plan.format->StreamStart(reply)) SendEvent(event);
  }

  void FinishStream(const ReplyEnd& end) {
    for (const Json& event : plan.format->StreamEnd(reply, end)) SendEvent(event);
    response->Write("data: [DONE]\n\n");
    response->End();
  }

  // The request-log line and metrics of the finished request.
  void Record(int status, const std::string& finish, const inference::GenerationStats& stats,
              Clock::time_point now) {
    RequestRecord r = RequestRecordOf(request_id, user_id, plan.route);
    r.time =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    r.status = status;
    r.prompt_tokens = stats.prompt_tokens;
    r.completion_tokens = stats.completion_tokens;
    r.ttft_ms = got_first ? Seconds(start, first_token) * 1000 : -1;
    r.duration_ms = Seconds(start, now) * 1000;
    r.finish_reason = finish;
    if (plan.rag)
      for (int n : CitedNumbers(reply.text, static_cast<int>(plan.sources.size())))
        r.documents_cited.push_back(plan.sources[n - 1].hit.document_id);
    if (ctx->config.log.content) {  // sealed by the log, never written in plain text
      auto prompt = plan.llm->engine->tokenizer().Decode(plan.request.prompt);
      r.prompt = prompt.ok() ? *prompt : "";
      r.answer = reply.text;
    }
    RecordRequest(*ctx, r);
  }

  // Text ready for the client: kept in the reply and streamed (with the
  // log-probabilities of the tokens since the last delta). Under mu.
  void Emit(std::string_view text) {
    reply.text += text;
    if (plan.stream && (!text.empty() || !reply.delta_tokens.empty()))
      SendEvent(plan.format->StreamDelta(reply, std::string(text)));
    reply.delta_tokens.clear();
  }

  // A sampled token's log-probabilities, for the wire format (logprobs
  // requested); end-of-generation tokens are not part of the answer.
  void AddLogprobs(const inference::SchedulerEvent& ev) {
    const inference::Tokenizer& tok = plan.llm->engine->tokenizer();
    if (tok.IsEndOfGeneration(ev.id)) return;
    const auto text_of = [&tok](inference::TokenId id) {
      auto t = tok.IsControl(id) ? tok.TokenPiece(id) : tok.TokenBytes(id);
      return t.ok() ? *t : std::string();
    };
    ReplyToken t{text_of(ev.id), ev.logprob, logprob_offset, {}};
    for (const inference::TokenLogprob& alt : ev.top_logprobs)
      t.top.push_back({text_of(alt.id), alt.logprob});
    logprob_offset += t.text.size();
    reply.tokens.push_back(t);
    reply.delta_tokens.push_back(std::move(t));
  }
  size_t logprob_offset = 0;  // bytes of the tokens so far

  // The end of a generation, after the attribution has finished. Under mu.
  void Complete(const inference::SchedulerEvent& ev, Clock::time_point now) {
    const bool cancelled = ev.finish_reason == inference::FinishReason::kCancelled;
    const std::string finish = cancelled ? "cancelled" : FinishName(ev.finish_reason);
    ctx->metrics.CountGeneration(plan.llm->id, finish, ev.stats.prompt_tokens, ev.stats.completion_tokens,
                                 got_first ? Seconds(start, first_token) : -1, Seconds(start, now),
                                 ev.stats.queue_ms / 1000.0);
    Record(cancelled ? 499 : 200, finish, ev.stats, now);
    if (plan.on_finished) reply.extra = plan.on_finished(reply, finish);
    if (cancelled) {
      // Cancelled with the client still there: the server stopped it
      // (shutting down), and the client is told so rather than left with a
      // cut answer.
      if (!response->cancelled()) {
        const Status stopped = Status::Unavailable("the server is shutting down; the answer was cut short");
        if (plan.stream)
          SendEvent(plan.format->StreamError(
              {{"code", 503}, {"type", ErrorTypeFor(stopped.code())}, {"message", stopped.message()}}));
        else
          response->Send(ErrorResponse(stopped));
      }
      response->End();
      StopListening();
    } else if (awaits_final_row && !final_row_written) {  // the counts go out once they are in the store
      end_pending = End(finish, ev.stats);
    } else {
      SendEnd(End(finish, ev.stats));
    }
  }

  void SendEnd(const ReplyEnd& end) {
    if (plan.stream) {
      FinishStream(end);
    } else {
      response->Send(JsonResponse(200, plan.format->Body(reply, end)));
    }
    StopListening();
  }

  // The ledger's listener holds this state alive while an answer waits for
  // its rows; the response has ended, so that cycle ends here.
  void StopListening() { admission.OnWritten({}); }

  // Holding back, so that a kill -9 never leaves the ledger more than
  // kCheckpointTokens - 1 tokens short of what the client received
  // (accounts/quota.h, Durability): the first token goes out once the
  // prompt's row is written, a later one only while prompt + tokens sent stay
  // within that of the row written, and the final counts only once the final
  // row is written. The writes are the ledger's thread's; while they keep up
  // (nearly always) only the first token waits, for the prompt's row. Events
  // that must wait are kept here in order and sent from the ledger's thread
  // when it writes; the inference thread never waits for the store. Under
  // mu, except completion_tokens, which only the inference thread touches.
  std::deque<inference::SchedulerEvent> held;
  bool accounted = false;          // the admission writes usage rows (set before the generation starts)
  int64_t completion_tokens = 0;   // tokens generated
  int64_t tokens_sent = 0;         // token events let through
  int64_t row_tokens = 0;          // prompt + completion in the row as last written
  bool awaits_final_row = false;   // settled with a final row to come
  bool final_row_written = false;  // ... and it is written
  std::optional<ReplyEnd> end_pending;

  bool MaySendToken() const {
    if (!accounted || final_row_written) return true;
    if (row_tokens == 0) return false;  // the prompt's row first: a begun answer never loses its prompt
    const int64_t prompt = static_cast<int64_t>(plan.request.prompt.size());
    return prompt + tokens_sent + 1 <= row_tokens + accounts::kCheckpointTokens - 1;
  }

  // Sends what may go out now, in order.
  void ReleaseHeld(const std::shared_ptr<RunState>& self) {
    while (!held.empty()) {
      if (held.front().kind == inference::SchedulerEvent::Kind::kToken && !MaySendToken()) return;
      const inference::SchedulerEvent ev = std::move(held.front());
      held.pop_front();
      Process(self, ev, Clock::now());
    }
  }

  // The ledger's thread, after a write of this request's usage row.
  void OnRowWritten(const std::shared_ptr<RunState>& self, int64_t tokens, bool final) {
    std::lock_guard<std::mutex> lock(mu);
    row_tokens = std::max(row_tokens, tokens);
    if (final) final_row_written = true;
    ReleaseHeld(self);
    if (final_row_written && end_pending) {
      const ReplyEnd end = std::move(*end_pending);
      end_pending.reset();
      SendEnd(end);
    }
  }

  bool Attributed() const { return plan.rag && ctx->attribution != nullptr; }

  // Tasks of ctx->attribution, in order: prepare, then each delta, then the end.
  void PrepareAttribution() {
    std::vector<std::string> texts;
    for (const Source& s : plan.sources) texts.push_back(s.hit.text);
    auto a = retrieval::Attributor::Create(texts, ctx->attribution_embeddings->Fn());
    if (a.ok()) attributor = std::make_unique<retrieval::Attributor>(std::move(a).value());
  }
  void Attribute(const std::string& delta) {
    std::string out = delta;
    if (attributor) {
      auto r = attributor->Feed(delta);
      if (r.ok()) {
        out = std::move(r).value();
      } else {
        std::fprintf(stderr, "ragd: attribution stopped: %s\n", r.status().message().c_str());
        out = attributor->Abandon();  // what it held back, then the rest streams as generated
        attributor.reset();
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    Emit(out);
  }
  void FinishAttributed(const inference::SchedulerEvent& ev, Clock::time_point now) {
    std::string rest;
    if (attributor) {
      auto r = attributor->Finish();
      if (r.ok()) {
        rest = std::move(r).value();
      } else {
        std::fprintf(stderr, "ragd: attribution stopped: %s\n", r.status().message().c_str());
        rest = attributor->Abandon();
        attributor.reset();  // no attribution in the done event rather than half of one
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    Emit(rest);
    if (attributor) reply.attribution = AttributionJson(*attributor);
    Complete(ev, now);
  }

  // Called on the inference thread; false cancels the generation. The
  // ledger hears of every event at once; what the client gets may wait (see
  // ReleaseHeld).
  bool OnEvent(const std::shared_ptr<RunState>& self, const inference::SchedulerEvent& ev) {
    // The ledger first and outside mu: settling in a new quota period waits
    // for the ledger's thread, which may be waiting for mu to deliver this
    // request's row (OnRowWritten).
    bool final_row = false;
    switch (ev.kind) {
      case inference::SchedulerEvent::Kind::kToken:
        ++completion_tokens;
        admission.Report(static_cast<int64_t>(plan.request.prompt.size()), completion_tokens);
        break;
      case inference::SchedulerEvent::Kind::kDone:
        final_row = admission.Settle(ev.stats.prompt_tokens, ev.stats.completion_tokens,
                                     ev.finish_reason != inference::FinishReason::kCancelled);
        break;
      case inference::SchedulerEvent::Kind::kError:
        admission.Settle(ev.stats.prompt_tokens, ev.stats.completion_tokens, false);
        break;
    }
    std::lock_guard<std::mutex> lock(mu);
    if (ev.kind == inference::SchedulerEvent::Kind::kDone) {
      awaits_final_row = final_row;
      if (!final_row) accounted = false;  // no row to wait for: nothing more to hold back
    }
    held.push_back(ev);
    ReleaseHeld(self);
    return ev.kind != inference::SchedulerEvent::Kind::kToken || !response->cancelled();
  }

  // One event, in the order generated, once it may go out. Under mu.
  void Process(const std::shared_ptr<RunState>& self, const inference::SchedulerEvent& ev,
               Clock::time_point now) {
    switch (ev.kind) {
      case inference::SchedulerEvent::Kind::kToken: {
        ++tokens_sent;
        if (!got_first) {
          got_first = true;
          first_token = now;
        } else {
          ctx->metrics.ObserveInterTokenLatency(Seconds(last_token, now));
        }
        last_token = now;
        std::string_view delta = ev.text;
        if (plan.rag && generated.empty())
          delta.remove_prefix(std::min(delta.find_first_not_of(" \n"), delta.size()));
        generated += delta;
        if (reply.logprobs) AddLogprobs(ev);
        if (!Attributed()) {
          Emit(delta);
        } else if (!delta.empty()) {
          ctx->attribution->Post([self, text = std::string(delta)] { self->Attribute(text); });
        }
        return;
      }
      case inference::SchedulerEvent::Kind::kDone: {
        if (!Attributed()) {
          Complete(ev, now);
          return;
        }
        ctx->attribution->Post([self, ev, now] { self->FinishAttributed(ev, now); });
        return;
      }
      case inference::SchedulerEvent::Kind::kError: {
        ctx->metrics.CountGeneration(plan.llm->id, "error", ev.stats.prompt_tokens,
                                     ev.stats.completion_tokens, -1, Seconds(start, now), 0);
        Record(HttpStatusFor(ev.error.code()), "error", ev.stats, now);
        if (plan.stream) {
          const int status = HttpStatusFor(ev.error.code());
          std::string message = ev.error.message();
          if (status >= 500 && status != 503) {  // internal detail: to the log, not the client
            std::fprintf(stderr, "ragd: %s: %s\n", request_id.c_str(), message.c_str());
            message = "internal error; the server log has the details under request id " + request_id;
          }
          Json err = {{"code", status}, {"type", ErrorTypeFor(ev.error.code())}, {"message", message}};
          SendEvent(plan.format->StreamError(err));
          response->End();
        } else {
          response->Send(ErrorResponse(ev.error));
        }
        StopListening();
        return;
      }
    }
  }
};

}  // namespace

Status CheckQuestionLength(std::string_view question) {
  if (question.size() <= kMaxQuestionBytes) return Status::Ok();
  return Status::InvalidArgument("the question is " + std::to_string(question.size()) +
                                 " bytes long; at most " + std::to_string(kMaxQuestionBytes) +
                                 " are allowed");
}

int64_t TextTokenEstimate(std::string_view text) { return static_cast<int64_t>(text.size() / 4) + 8; }

int64_t ChatPromptEstimate(const std::vector<inference::ChatMessage>& messages) {
  int64_t n = 16;
  for (const inference::ChatMessage& m : messages)
    n += TextTokenEstimate(m.role) + TextTokenEstimate(m.content);
  return n;
}

int64_t RagPromptEstimate(const AppContext& ctx, const RagQuestion& q) {
  // The rules and worked example take under 1024 tokens; a passage of
  // chunk_tokens embedding tokens seldom takes more than twice that in the
  // answer model's tokens, with its number and title. A short estimate is
  // corrected (Admission::Resize) once the prompt is built.
  constexpr int64_t kRulesTokens = 1024;
  const int64_t per_source = 2 * ctx.config.retrieval.chunk_tokens + 32;
  return kRulesTokens + q.top_k * per_source + ChatPromptEstimate(q.history) + TextTokenEstimate(q.question);
}

std::optional<HttpResponse> AdmitGeneration(AppContext& ctx, const accounts::User& user,
                                            const GenerationPlan& plan, int64_t prompt_estimate,
                                            Admission* admitted) {
  const int64_t n_ctx = plan.llm->engine->context_length();
  const int64_t budget = std::min(n_ctx, prompt_estimate + std::max<int64_t>(0, plan.request.max_tokens));
  return Admit(ctx, user, budget, plan.route, admitted);
}

// How many leading tokens of `prompt` (a RAG prompt for `engine`) are the
// server's rules, shared by every user's prompts: the longest common prefix
// with the prompt of an empty question without sources, under either set of
// rules (rag_prompt.h; made once per engine).
int64_t RulesPrefix(const inference::Engine& engine, std::span<const inference::TokenId> prompt) {
  static std::mutex mu;
  using Probes = std::vector<std::vector<inference::TokenId>>;
  static std::map<const inference::Engine*, Probes> probes;  // GUARDED_BY(mu)
  Probes mine;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = probes.find(&engine);
    if (it == probes.end()) {
      Probes made;
      for (bool checked : {false, true}) {
        auto ids = engine.chat_template() != inference::ChatTemplate::kNone
                       ? engine.FormatChat(BuildRagConversation("", {}, {}, checked))
                       : engine.PlainPrompt(BuildRagPrompt("", {}));
        if (ids.ok()) made.push_back(std::move(ids).value());
      }
      it = probes.emplace(&engine, std::move(made)).first;
    }
    mine = it->second;
  }
  int64_t longest = 0;
  for (const auto& probe : mine) {
    const auto end = std::mismatch(prompt.begin(), prompt.end(), probe.begin(), probe.end());
    longest = std::max<int64_t>(longest, end.first - prompt.begin());
  }
  return longest;
}

Status AnswerFromCorpus(AppContext& ctx, const RagQuestion& question, GenerationPlan* plan) {
  RagQuestion q = question;
  ApplyRagConfig(ctx.config.rag, &q);
  auto answer = PlanRagAnswer(*ctx.retriever, *plan->llm->engine, q, std::move(plan->request), &ctx.metrics);
  if (!answer.ok()) return answer.status();
  plan->rag = true;
  plan->sources = std::move(answer->sources);
  plan->retrieval_ms = answer->retrieval_ms;
  plan->translation_ms = answer->translation_ms;
  plan->answerability_ms = answer->answerability_ms;
  plan->rewrite_ms = answer->rewrite_ms;
  plan->rewritten_question = std::move(answer->rewritten);
  plan->abstention = std::move(answer->abstention);
  plan->request = std::move(answer->request);
  plan->request.shared_prefix = RulesPrefix(*plan->llm->engine, plan->request.prompt);
  return Status::Ok();
}

// The exchange of a request that the reactor thread has already deferred,
// for the work that goes on elsewhere: Defer() hands out the same response.
class DeferredExchange : public HttpExchange {
 public:
  DeferredExchange(std::shared_ptr<AsyncResponse> response, std::string request_id)
      : response_(std::move(response)), request_id_(std::move(request_id)) {}
  std::shared_ptr<AsyncResponse> Defer() override {
    taken_ = true;
    return response_;
  }
  bool deferred() const override { return taken_; }
  const std::string& request_id() const override { return request_id_; }

 private:
  std::shared_ptr<AsyncResponse> response_;
  std::string request_id_;
  bool taken_ = false;
};

HttpResponse RunRagGeneration(AppContext& ctx, const accounts::User& user, const RagQuestion& question,
                              GenerationPlan plan, HttpExchange& exchange) {
  const Clock::time_point start = Clock::now();
  Admission admission;
  if (auto refused = AdmitGeneration(ctx, user, plan, RagPromptEstimate(ctx, question), &admission))
    return *refused;
  RagQuestion q = question;
  LanguageModel& fast = FastLlm(ctx);
  const uint64_t scope = static_cast<uint64_t>(user.id);
  if (ctx.config.rag.translate_queries && fast.engine->chat_template() != inference::ChatTemplate::kNone) {
    // Retrieval's own work, as the query's embedding is: not charged. The
    // answer does not wait longer than this behind a busy fast model.
    constexpr std::chrono::milliseconds kTranslateTimeout{3000};
    q.to_english = TranslateWith(*fast.engine, *fast.generator, kTranslateTimeout, scope);
  }
  // Only the answer model rewrites follow-ups, when it can (follow_up.h):
  // the fast route does not wait for it. Not charged either.
  if (ctx.config.rag.rewrite_follow_ups && plan.llm == ctx.llms.front().get() &&
      RewritesFollowUps(*plan.llm->engine)) {
    constexpr std::chrono::milliseconds kRewriteTimeout{5000};
    q.standalone = RewriteWith(*plan.llm->engine, *plan.llm->generator, kRewriteTimeout, scope);
  }
  // The check was calibrated on the answer model (the first of models.llm);
  // another model's answers say themselves when the sources do not answer.
  // PlanRagAnswer asks it only of a model it separates.
  if (ctx.config.rag.abstain_answerability_below > 0 && plan.llm == ctx.llms.front().get()) {
    // Not charged either, and in the answer's cache scope: the answer then
    // finds the sources already in the prefix cache. The check's prefill is
    // the answer's, so giving up on a slow check saves nothing: it throws
    // that work away and queues the answer again. A 10 s limit did that to
    // every new question on a 2-core AVX2 machine (a 1000-token prompt of
    // the 1.5B prefills in about 15 s there), which then went unchecked
    // and waited 10 s longer. Only a stuck model hits this limit; the
    // model then answers unchecked.
    constexpr std::chrono::milliseconds kCheckTimeout{std::chrono::minutes(2)};
    const inference::Engine& engine = *plan.llm->engine;
    q.answerable = JudgeWith(engine, *plan.llm->generator, kCheckTimeout,
                             [&engine, scope](inference::GenerationRequest& r) {
                               r.cache_scope = scope;
                               r.shared_prefix = RulesPrefix(engine, r.prompt);
                             });
    q.abstain_answerability_below = ctx.config.rag.abstain_answerability_below;
  }
  // The translation and the answerability check wait for models: the rest
  // runs on the RAG pool, never on an HTTP thread.
  struct Work {
    accounts::User user;
    RagQuestion q;
    GenerationPlan plan;
    Admission admission;
    std::shared_ptr<AsyncResponse> response;
    std::string request_id;
  };
  auto work = std::make_shared<Work>(Work{user, std::move(q), std::move(plan), std::move(admission),
                                          exchange.Defer(), exchange.request_id()});
  const bool accepted = ctx.rag_pool->TryPost([&ctx, work, start] {
    DeferredExchange ex(work->response, work->request_id);
    // Recorded here when it ends without a generation (a failed planning or
    // a refusal), as the HTTP layer records only what handlers return; an
    // abstention records itself.
    const RequestRecord record = RequestRecordOf(work->request_id, work->user.id, work->plan.route);
    HttpResponse r;
    bool recorded = false;
    if (Status st = AnswerFromCorpus(ctx, work->q, &work->plan); !st.ok()) {
      std::fprintf(stderr, "ragd: request %s: %s\n", work->request_id.c_str(), st.ToString().c_str());
      work->admission.Cancel();
      r = ErrorResponse(st);
    } else {
      recorded = !work->plan.abstention.empty();
      r = RunGeneration(ctx, work->user, std::move(work->plan), std::move(work->admission), ex);
    }
    if (ex.deferred()) return;
    // Logged before it is sent: a client that reads the log next finds it.
    if (!recorded) RecordDeferred(ctx, record, r.status, start);
    work->response->Send(r);
  });
  if (!accepted) {
    work->admission.Cancel();
    HttpResponse r =
        HttpResponse::Error(503, "unavailable_error", "too many questions in progress; try again");
    r.headers.push_back({"Retry-After", "1"});
    RecordDeferred(ctx, RequestRecordOf(work->request_id, user.id, work->plan.route), r.status, start);
    work->response->Send(r);
  }
  return HttpResponse();  // deferred
}

namespace {

// The reply's fields that the plan decides, before anything is written.
Reply NewReply(const GenerationPlan& plan) {
  Reply r;
  r.id = NewId(plan.format->id_prefix());
  r.created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  r.model_id = plan.model_id;
  r.rag = plan.rag;
  if (plan.rag) {
    r.answer_model = plan.llm->id;
    r.rewritten_question = plan.rewritten_question;
  }
  r.include_usage = plan.include_usage;
  return r;
}

}  // namespace

// An answer given without the model (an abstention): no tokens, nothing charged.
HttpResponse AnswerWithoutGeneration(AppContext& ctx, const accounts::User& user, GenerationPlan plan,
                                     Admission admission, HttpExchange& exchange) {
  admission.Cancel();
  RunState state;
  state.ctx = &ctx;
  state.user_id = user.id;
  state.request_id = exchange.request_id();
  state.reply = NewReply(plan);
  state.reply.answer_model = "";  // no model wrote it
  state.reply.attribution = Json{{"grounded", true}, {"sentences", Json::array()}};
  state.start = Clock::now();
  const std::string text = plan.abstention;
  state.plan = std::move(plan);
  state.reply.sources = &state.plan.sources;
  const inference::GenerationStats none;
  const ReplyEnd end = state.End("stop", none);
  state.Record(200, "abstained", none, Clock::now());
  state.reply.text = text;
  if (state.plan.on_finished) state.reply.extra = state.plan.on_finished(state.reply, "stop");
  state.reply.text.clear();
  if (!state.plan.stream) {
    state.reply.text = text;
    return JsonResponse(200, state.plan.format->Body(state.reply, end));
  }
  std::string body;
  const auto event = [&body](const Json& j) { body += "data: " + DumpJson(j) + "\n\n"; };
  for (const Json& e : state.plan.format->StreamStart(state.reply)) event(e);
  state.reply.text = text;
  event(state.plan.format->StreamDelta(state.reply, text));
  for (const Json& e : state.plan.format->StreamEnd(state.reply, end)) event(e);
  body += "data: [DONE]\n\n";
  HttpResponse r = HttpResponse::Json(200, "");
  r.content_type = "text/event-stream; charset=utf-8";
  r.body = std::move(body);
  return r;
}

HttpResponse RunGeneration(AppContext& ctx, const accounts::User& user, GenerationPlan plan,
                           Admission admission, HttpExchange& exchange) {
  if (!plan.abstention.empty())
    return AnswerWithoutGeneration(ctx, user, std::move(plan), std::move(admission), exchange);
  const int64_t n_prompt = static_cast<int64_t>(plan.request.prompt.size());
  const int64_t n_ctx = plan.llm->engine->context_length();
  if (n_prompt >= n_ctx) {
    admission.Cancel();
    return ContextLengthRefusal(ctx.metrics,
                                "the prompt has " + std::to_string(n_prompt) +
                                    " tokens, more than the context of " + std::to_string(n_ctx) +
                                    " tokens allows",
                                n_prompt, n_ctx);
  }
  plan.request.max_tokens = static_cast<int>(std::min<int64_t>(plan.request.max_tokens, n_ctx - n_prompt));
  // What this user's prompt and answer leave in the prefix cache and the
  // draft phrasing serves this user only (past the shared rules).
  plan.request.cache_scope = static_cast<uint64_t>(user.id);

  if (auto refused = admission.Resize(ctx.metrics, n_prompt + plan.request.max_tokens)) {
    admission.Cancel();
    return *refused;
  }
  auto state = std::make_shared<RunState>();
  state->admission = std::move(admission);
  state->ctx = &ctx;
  state->user_id = user.id;
  state->request_id = exchange.request_id();
  state->reply = NewReply(plan);
  state->reply.logprobs = plan.request.logprobs >= 0;
  state->start = Clock::now();
  state->plan = std::move(plan);
  state->reply.sources = &state->plan.sources;

  state->accounted = state->admission.records_usage();
  state->admission.OnWritten(
      [state](int64_t tokens, bool final) { state->OnRowWritten(state, tokens, final); });

  // The callback waits on state->mu until the response below is ready.
  std::unique_lock<std::mutex> lock(state->mu);
  // The sources are embedded for the attribution while the prompt is computed.
  if (state->Attributed()) ctx.attribution->Post([state] { state->PrepareAttribution(); });
  auto ticket = state->plan.llm->generator->Submit(
      state->plan.request,
      [state](const inference::SchedulerEvent& ev) { return state->OnEvent(state, ev); });
  if (!ticket.ok()) {
    state->StopListening();
    state->admission.Cancel();
    HttpResponse r = ErrorResponse(ticket.status());
    if (ticket.status().code() == StatusCode::kUnavailable) r.headers.push_back({"Retry-After", "2"});
    return r;
  }
  // From here the inference thread answers; the stream starts at once so the
  // client sees the citations (RAG) before the first token.
  state->response = exchange.Defer();
  // A client that goes away frees its place at once, queued or in prefill,
  // not only at its next token.
  state->response->OnCancel([handle = *ticket] { handle.Cancel(); });
  if (state->plan.stream) state->StartStream();
  return HttpResponse::Json(200, "");
}

}  // namespace ragd::app
