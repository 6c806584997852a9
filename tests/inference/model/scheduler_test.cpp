// The batching scheduler on the real Gemma 3 270M model: every request gets
// exactly what it gets alone (Generation), whatever else shares its steps, with
// chunked prefill, cancellation, the prefix cache and speculative drafts.
#include "inference/scheduler.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>

#include "tests/inference/model/real_model.h"

namespace ragd::inference {
namespace {

Engine* Shared() {
  static std::unique_ptr<Engine> engine = real_model::LoadEngine(2048);
  return engine.get();
}

std::vector<TokenId> Prompt(const std::string& text) {
  const Tokenizer& tok = Shared()->tokenizer();
  auto ids = tok.Encode(text);
  EXPECT_TRUE(ids.ok());
  std::vector<TokenId> p = {tok.bos_id()};
  p.insert(p.end(), ids->begin(), ids->end());
  return p;
}

// A text of roughly `words` words that reads like a document.
std::string Filler(int words, int seed) {
  static const char* kWords[] = {"the",     "river", "council", "approved", "a",       "budget",
                                 "for",     "new",   "bridges", "and",      "schools", "while",
                                 "farmers", "asked", "about",   "water",    "prices",  "in",
                                 "spring",  "of",    "next",    "year"};
  std::string s;
  uint32_t x = 2463534242u + seed;
  for (int i = 0; i < words; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    s += kWords[x % (sizeof kWords / sizeof *kWords)];
    s += (i % 12 == 11) ? ".\n" : " ";
  }
  return s;
}

GenerationRequest Request(std::vector<TokenId> prompt, int max_tokens, float temperature = 0,
                          uint64_t seed = 1) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling.temperature = temperature;
  r.sampling.seed = seed;
  return r;
}

struct Outcome {
  std::vector<TokenId> ids;
  std::string text;
  FinishReason reason = FinishReason::kNone;
  GenerationStats stats;
  bool error = false;
};

Outcome Alone(const GenerationRequest& r) {
  Outcome out;
  auto g = Shared()->Start(r);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return out;
  while (true) {
    auto c = (*g)->Next();
    EXPECT_TRUE(c.ok());
    if (!c.ok() || !*c) break;
    out.ids.push_back((*c)->id);
    out.text += (*c)->text;
  }
  out.reason = (*g)->finish_reason();
  out.stats = (*g)->stats();
  return out;
}

// Submits all requests at once and waits for every one to end. A request
// whose index is in `cancel_after` cancels itself after that many tokens.
std::vector<Outcome> Together(Scheduler& s, const std::vector<GenerationRequest>& requests,
                              std::map<size_t, int> cancel_after = {}) {
  std::vector<Outcome> out(requests.size());
  std::mutex mu;
  std::condition_variable cv;
  size_t ended = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const int limit = cancel_after.count(i) ? cancel_after[i] : -1;
    auto h = s.Submit(requests[i], [&, i, limit](const SchedulerEvent& ev) {
      std::lock_guard<std::mutex> lock(mu);
      Outcome& o = out[i];
      if (ev.kind == SchedulerEvent::Kind::kToken) {
        o.ids.push_back(ev.id);
        o.text += ev.text;
        return limit < 0 || static_cast<int>(o.ids.size()) < limit;
      }
      o.error = ev.kind == SchedulerEvent::Kind::kError;
      o.reason = ev.finish_reason;
      o.stats = ev.stats;
      ++ended;
      cv.notify_all();
      return true;
    });
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      ++ended;
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return ended == requests.size(); });
  return out;
}

SchedulerOptions Plain() {
  SchedulerOptions o;
  o.step_tokens = 64;  // small: long prompts are prefilled over many steps, mixed with decoding
  o.prefix_cache.max_bytes = 0;
  o.speculative = false;
  return o;
}

// Prompts of mixed lengths, one past the 512-token sliding window.
std::vector<GenerationRequest> Mixed(float temperature) {
  return {Request(Prompt("The capital of France is"), 20, temperature, 11),
          Request(Prompt(Filler(60, 1) + "\nIn short,"), 24, temperature, 12),
          Request(Prompt(Filler(300, 2) + "\nSummary:"), 16, temperature, 13),
          Request(Prompt(Filler(700, 3) + "\nThe council"), 20, temperature, 14),
          Request(Prompt("def fibonacci(n):"), 28, temperature, 15)};
}

void ExpectSame(const std::vector<Outcome>& got, const std::vector<GenerationRequest>& requests) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Outcome alone = Alone(requests[i]);
    ASSERT_FALSE(alone.ids.empty());
    EXPECT_EQ(got[i].ids, alone.ids) << "request " << i;
    EXPECT_EQ(got[i].text, alone.text) << "request " << i;
    EXPECT_EQ(got[i].reason, alone.reason) << "request " << i;
    EXPECT_EQ(got[i].stats.prompt_tokens, alone.stats.prompt_tokens);
    EXPECT_EQ(got[i].stats.completion_tokens, alone.stats.completion_tokens);
  }
}

TEST(Scheduler, BatchedGreedyEqualsAlone) {
  ASSERT_NE(Shared(), nullptr);
  Scheduler s(*Shared(), Plain());
  const auto requests = Mixed(0);
  const auto got = Together(s, requests);
  ExpectSame(got, requests);
  const SchedulerGauges g = s.gauges();
  // Fewer steps than tokens: sequences really shared forward passes.
  uint64_t tokens = 0;
  for (const auto& r : requests) tokens += r.prompt.size() + r.max_tokens;
  EXPECT_LT(g.steps, tokens / 4);
  EXPECT_EQ(g.running, 0u);
  EXPECT_EQ(g.kv_bytes, 0u);
}

TEST(Scheduler, BatchedSamplingWithSeedsEqualsAlone) {
  ASSERT_NE(Shared(), nullptr);
  Scheduler s(*Shared(), Plain());
  const auto requests = Mixed(0.9f);
  ExpectSame(Together(s, requests), requests);
}

TEST(Scheduler, CancellingOneLeavesTheOthersUnchanged) {
  ASSERT_NE(Shared(), nullptr);
  Scheduler s(*Shared(), Plain());
  const auto requests = Mixed(0);
  const auto got = Together(s, requests, {{1, 3}});
  EXPECT_EQ(got[1].reason, FinishReason::kCancelled);
  EXPECT_EQ(got[1].ids.size(), 3u);
  for (size_t i : {0, 2, 3, 4}) {
    const Outcome alone = Alone(requests[i]);
    EXPECT_EQ(got[i].ids, alone.ids) << "request " << i;
  }
}

TEST(Scheduler, PrefixReuseGivesTheColdOutput) {
  ASSERT_NE(Shared(), nullptr);
  SchedulerOptions o = Plain();
  o.prefix_cache.max_bytes = size_t{256} << 20;
  Scheduler s(*Shared(), o);
  // A shared head longer than the sliding window, then different questions.
  const std::string head = Filler(650, 7);
  const auto first = Request(Prompt(head + "\nQuestion: what did the council approve?\nAnswer:"), 16);
  const auto second = Request(Prompt(head + "\nQuestion: what did the farmers ask?\nAnswer:"), 16);
  const auto a = Together(s, {first});
  EXPECT_EQ(a[0].stats.cached_tokens, 0);
  const auto b = Together(s, {second});
  EXPECT_GE(b[0].stats.cached_tokens, 512);
  const int block = o.prefix_cache.block_tokens;
  EXPECT_EQ(b[0].stats.cached_tokens % block, 0);
  EXPECT_LT(b[0].stats.cached_tokens, static_cast<int>(second.prompt.size()));
  EXPECT_EQ(b[0].ids, Alone(second).ids);
  // The very same prompt again: everything but the last block is reused.
  const auto c = Together(s, {second});
  EXPECT_GE(c[0].stats.cached_tokens, static_cast<int>(second.prompt.size()) - block);
  EXPECT_EQ(c[0].ids, b[0].ids);
  const SchedulerGauges g = s.gauges();
  EXPECT_EQ(g.prefix.queries, 3u);
  EXPECT_EQ(g.prefix.hits, 2u);
  EXPECT_GT(g.prefix.bytes, 0u);
}

// An answer that copies its source, as RAG answers do.
GenerationRequest Copying(float temperature) {
  const std::string source = Filler(120, 9);
  return Request(Prompt("Copy the text exactly.\nText: " + source + "\nCopy: " + source.substr(0, 40)), 48,
                 temperature, 5);
}

TEST(Scheduler, SpeculativeDecodingGivesTheSameOutput) {
  ASSERT_NE(Shared(), nullptr);
  SchedulerOptions o = Plain();
  o.speculative = true;
  // The plan from the measured step cost follows the machine's load; a fixed
  // cost makes the drafts this test counts the same on a busy machine.
  o.draft_row_cost = 0.1;
  Scheduler s(*Shared(), o);
  std::vector<GenerationRequest> requests = Mixed(0);
  requests.push_back(Copying(0));
  requests.push_back(Copying(0.7f));
  const auto got = Together(s, requests);
  ExpectSame(got, requests);
  EXPECT_GT(got[5].stats.draft_tokens, 0);
  EXPECT_GT(got[5].stats.draft_accepted, 0);
  EXPECT_LE(got[5].stats.draft_accepted, got[5].stats.draft_tokens);
  const SchedulerGauges g = s.gauges();
  EXPECT_GT(g.draft_accepted, 0u);
}

TEST(Scheduler, KvBudgetAdmitsInTurnAndRefusesWhatNeverFits) {
  ASSERT_NE(Shared(), nullptr);
  SchedulerOptions o = Plain();
  const auto requests = Mixed(0);
  o.kv_budget_bytes = size_t{24} << 20;  // the 700-word prompt alone needs ~22 MiB
  Scheduler s(*Shared(), o);
  const auto got = Together(s, requests);
  ExpectSame(got, requests);

  SchedulerOptions tiny = Plain();
  tiny.kv_budget_bytes = size_t{1} << 20;
  Scheduler t(*Shared(), tiny);
  auto refused = t.Submit(requests[3], [](const SchedulerEvent&) { return true; });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("KV cache"), std::string::npos);
}

TEST(Scheduler, FullQueueIsUnavailable) {
  ASSERT_NE(Shared(), nullptr);
  SchedulerOptions o = Plain();
  o.max_running = 1;
  o.max_queue = 1;
  Scheduler s(*Shared(), o);
  std::mutex mu;
  std::condition_variable cv;
  int ended = 0;
  auto count = [&](const SchedulerEvent& ev) {
    if (ev.kind != SchedulerEvent::Kind::kToken) {
      std::lock_guard<std::mutex> lock(mu);
      ++ended;
      cv.notify_all();
    }
    return true;
  };
  int accepted = 0, refused = 0;
  for (int i = 0; i < 6; ++i) {
    auto h = s.Submit(Request(Prompt(Filler(200, i)), 8), count);
    if (h.ok())
      ++accepted;
    else if (h.status().code() == StatusCode::kUnavailable)
      ++refused;
  }
  EXPECT_GE(refused, 1);
  EXPECT_EQ(accepted + refused, 6);
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return ended == accepted; });
}

}  // namespace
}  // namespace ragd::inference
