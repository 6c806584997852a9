#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;
using testing::TempDir;

constexpr int64_t kNoon = testing::kNoonMillis / 1000;  // 2026-11-29T12:00:00Z
constexpr int64_t kMidnight = kNoon + 12 * 3600;        // 2026-11-30T00:00:00Z
constexpr int64_t kDecember = kMidnight + 86400;        // 2026-12-01T00:00:00Z

class Quota : public testing::BackendTest {};

AccountsOptions WithBudget(int64_t tokens, Period period = Period::kDay) {
  AccountsOptions options;
  options.quota.tokens_per_period = tokens;
  options.quota.period = period;
  return options;
}

QuotaStatus StatusOf(Accounts& accounts, const User& user) {
  Result<QuotaStatus> status = accounts.quota().GetStatus(user);
  EXPECT_TRUE(status.ok()) << status.status().ToString();
  return status.ok() ? *status : QuotaStatus();
}

TEST(Period, DayAndMonthBoundariesInUtc) {
  EXPECT_EQ(PeriodStart(Period::kDay, kNoon), kMidnight - 86400);
  EXPECT_EQ(PeriodEnd(Period::kDay, kNoon), kMidnight);
  EXPECT_EQ(PeriodStart(Period::kDay, kMidnight), kMidnight);
  EXPECT_EQ(PeriodEnd(Period::kMonth, kNoon), kDecember);
  EXPECT_EQ(PeriodStart(Period::kMonth, kDecember), kDecember);
  EXPECT_EQ(PeriodStart(Period::kMonth, kDecember - 1), kDecember - 30 * 86400);
  EXPECT_EQ(FormatUtcTime(kNoon), "2026-11-29T12:00:00Z");
  EXPECT_EQ(FormatUtcTime(kDecember - 1), "2026-11-30T23:59:59Z");
  EXPECT_EQ(FormatUtcDay(kNoon), "2026-11-29");
  // February of a leap year.
  int64_t feb_2028 = PeriodStart(Period::kMonth, kDecember + 455 * 86400);
  EXPECT_EQ(FormatUtcTime(feb_2028), "2028-02-01T00:00:00Z");
  EXPECT_EQ(PeriodEnd(Period::kMonth, feb_2028) - feb_2028, 29 * 86400);
  EXPECT_EQ(ParsePeriod("month").value(), Period::kMonth);
  EXPECT_FALSE(ParsePeriod("week").ok());
}

TEST_P(Quota, ReserveSettleReleaseArithmetic) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock, WithBudget(1000));
  ASSERT_TRUE(accounts);
  User alice = MakeUser(*accounts, "alice");
  QuotaLedger& quota = accounts->quota();

  QuotaStatus s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.limit, 1000);
  EXPECT_EQ(s.used, 0);
  EXPECT_EQ(s.remaining, 1000);
  EXPECT_EQ(s.period, Period::kDay);
  EXPECT_EQ(s.resets_at, kMidnight);

  Result<Reservation> r = quota.Reserve(alice, 300, "/v1/ask");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->active());
  EXPECT_EQ(r->tokens(), 300);
  s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.reserved, 300);
  EXPECT_EQ(s.remaining, 700);

  ASSERT_TRUE(quota.Settle(*r, 100, 50).ok());
  EXPECT_FALSE(r->active());
  s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 150);
  EXPECT_EQ(s.reserved, 0);
  EXPECT_EQ(s.remaining, 850);
  EXPECT_EQ(r->Settle(1, 1).code(), StatusCode::kInvalidArgument);  // only once

  // Dropped without settling: charges what was reported.
  {
    Result<Reservation> dropped = quota.Reserve(alice, 400, "/v1/chat/completions");
    ASSERT_TRUE(dropped.ok());
    dropped->Report(40, 10);
    dropped->Report(40, 25);  // cumulative
    // What its row was charged so far is used; the hold covers the rest.
    QuotaStatus in_flight = StatusOf(*accounts, alice);
    EXPECT_EQ(in_flight.used + in_flight.reserved, 150 + 400);
    EXPECT_GE(in_flight.used, 150 + 50);
  }
  s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 215);
  EXPECT_EQ(s.reserved, 0);

  // Released with nothing reported: charges nothing and writes no row.
  Result<Reservation> nothing = quota.Reserve(alice, 100, "/v1/ask");
  ASSERT_TRUE(nothing.ok());
  ASSERT_TRUE(nothing->Release().ok());
  EXPECT_TRUE(nothing->Release().ok());  // idempotent
  EXPECT_EQ(StatusOf(*accounts, alice).used, 215);

  // Embeddings in one step.
  ASSERT_TRUE(quota.Charge(alice, 35, 0, "/v1/embeddings").ok());
  EXPECT_EQ(StatusOf(*accounts, alice).used, 250);

  Result<std::vector<DayUsage>> days = quota.DailyUsage(alice.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].day, "2026-11-29");
  EXPECT_EQ((*days)[0].prompt_tokens, 100 + 40 + 35);
  EXPECT_EQ((*days)[0].completion_tokens, 50 + 25);
  EXPECT_EQ((*days)[0].requests, 3);
  // Only the settled generation is a successful answer: the dropped request and
  // the embeddings are not.
  EXPECT_EQ((*days)[0].successful_answers, 1);

  EXPECT_EQ(quota.Reserve(alice, -1, "/v1/ask").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(Quota, RefusesWhatTheBudgetCannotCover) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock, WithBudget(1000));
  ASSERT_TRUE(accounts);
  User alice = MakeUser(*accounts, "alice");
  User big = MakeUser(*accounts, "big", 5000);
  QuotaLedger& quota = accounts->quota();

  ASSERT_TRUE(quota.Charge(alice, 500, 300, "/v1/ask").ok());  // 200 left
  Refusal refusal;
  Result<Reservation> r = quota.Reserve(alice, 201, "/v1/ask", &refusal);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal.remaining_tokens, 200);
  EXPECT_EQ(refusal.retry_after_s, 12 * 3600);        // until midnight UTC
  EXPECT_EQ(StatusOf(*accounts, alice).reserved, 0);  // a refusal holds nothing

  Result<Reservation> exact = quota.Reserve(alice, 200, "/v1/ask");
  ASSERT_TRUE(exact.ok());
  // Would fit once the request in flight ends: retry soon, not at midnight.
  Result<Reservation> more = quota.Reserve(alice, 150, "/v1/ask", &refusal);
  EXPECT_EQ(more.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal.remaining_tokens, 0);
  EXPECT_EQ(refusal.retry_after_s, 1);
  ASSERT_TRUE(exact->Settle(20, 30).ok());
  EXPECT_TRUE(quota.Reserve(alice, 150, "/v1/ask").ok());

  // The per-user override applies; other users are independent.
  EXPECT_EQ(StatusOf(*accounts, big).limit, 5000);
  EXPECT_TRUE(quota.Reserve(big, 4000, "/v1/ask").ok());
  // A user with a zero quota can do nothing, even zero-cost checks pass.
  ASSERT_TRUE(accounts->users().SetTokenQuota(alice.id, 0).ok());
  User blocked = *accounts->users().Get(alice.id);
  EXPECT_EQ(quota.Reserve(blocked, 1, "/v1/ask").status().code(), StatusCode::kResourceExhausted);
}

// Sixteen threads spending one user's budget at once, thread t on
// ledger_of(t): each request reserves prompt + max_tokens, reports half its
// answer, and settles, or (every fifth) is dropped after reporting it all.
struct Spenders {
  int64_t budget = 0;
  std::atomic<int64_t> committed{0};  // tokens held or charged, as seen by the threads
  std::atomic<int64_t> settled{0}, granted{0}, refused{0};
  std::atomic<bool> overspent{false};

  void Run(const User& user, int requests_per_thread, const std::function<QuotaLedger&(int)>& ledger_of) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&, t] {
        QuotaLedger& quota = ledger_of(t);
        std::mt19937 rng(t);
        for (int i = 0; i < requests_per_thread; ++i) {
          const int64_t prompt = 10 + rng() % 200, max_tokens = 1 + rng() % 300;
          Result<Reservation> r = quota.Reserve(user, prompt + max_tokens, "/v1/ask");
          if (!r.ok()) {
            if (r.status().code() != StatusCode::kResourceExhausted) overspent = true;
            ++refused;
            continue;
          }
          ++granted;
          if ((committed += prompt + max_tokens) > budget) overspent = true;
          Result<QuotaStatus> s = quota.GetStatus(user);
          if (!s.ok() || s->used + s->reserved > budget) overspent = true;
          const int64_t completion = rng() % (max_tokens + 1);
          r->Report(prompt, completion / 2);
          committed -= max_tokens - completion;  // before the ledger frees it
          if (i % 5 == 0) {
            r->Report(prompt, completion);  // a cancelled request
            *r = Reservation();
          } else if (!r->Settle(prompt, completion).ok()) {
            overspent = true;
          }
          settled += prompt + completion;
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
};

TEST_P(Quota, SixteenThreadsNeverOverspendAndTheLedgerMatchesTheRows) {
  ManualClock clock(testing::kNoonMillis);
  constexpr int64_t kBudget = 50000;
  auto accounts = Open(&clock, WithBudget(kBudget));
  ASSERT_TRUE(accounts);
  User alice = MakeUser(*accounts, "alice");
  QuotaLedger& quota = accounts->quota();

  Spenders spenders;
  spenders.budget = kBudget;
  spenders.Run(alice, 200, [&](int) -> QuotaLedger& { return quota; });
  EXPECT_FALSE(spenders.overspent);
  EXPECT_GT(spenders.granted.load(), 0);
  EXPECT_GT(spenders.refused.load(), 0);  // the budget was actually contended

  QuotaStatus s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.reserved, 0);
  EXPECT_EQ(s.used, spenders.settled.load());
  EXPECT_LE(s.used, kBudget);
  Result<std::vector<DayUsage>> days = quota.DailyUsage(alice.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].prompt_tokens + (*days)[0].completion_tokens, spenders.settled.load());
  EXPECT_EQ((*days)[0].requests, spenders.granted.load());
}

TEST_P(Quota, UsageSurvivesReopening) {
  ManualClock clock(testing::kNoonMillis);
  User alice;
  {
    auto accounts = Open(&clock, WithBudget(1000));
    ASSERT_TRUE(accounts);
    alice = MakeUser(*accounts, "alice");
    ASSERT_TRUE(accounts->quota().Charge(alice, 300, 100, "/v1/ask").ok());
    Result<Reservation> open = accounts->quota().Reserve(alice, 500, "/v1/ask");
    ASSERT_TRUE(open.ok());
    open->Report(50, 0);
    // `open` is released with the accounts gone: charged 50 from the shared state.
    accounts.reset();
  }
  auto accounts = Open(&clock, WithBudget(1000));
  ASSERT_TRUE(accounts);
  QuotaStatus s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 450);
  EXPECT_EQ(s.reserved, 0);
  EXPECT_EQ(s.remaining, 550);
  Refusal refusal;
  EXPECT_FALSE(accounts->quota().Reserve(alice, 551, "/v1/ask", &refusal).ok());
  EXPECT_EQ(refusal.remaining_tokens, 550);
}

TEST_P(Quota, DailyPeriodRollsOverAtMidnightUtc) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = Open(&clock, WithBudget(1000));
  ASSERT_TRUE(accounts);
  User alice = MakeUser(*accounts, "alice");
  QuotaLedger& quota = accounts->quota();
  ASSERT_TRUE(quota.Charge(alice, 900, 100, "/v1/ask").ok());
  Refusal refusal;
  EXPECT_FALSE(quota.Reserve(alice, 1, "/v1/ask", &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 12 * 3600);

  clock.SetMillis((kMidnight - 1) * 1000);
  EXPECT_FALSE(quota.Reserve(alice, 1, "/v1/ask", &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 1);

  // A request in flight across midnight is charged to the day it ends in.
  clock.SetMillis((kMidnight - 1) * 1000);
  ASSERT_TRUE(accounts->users().SetTokenQuota(alice.id, 1200).ok());
  alice = *accounts->users().Get(alice.id);
  Result<Reservation> late = quota.Reserve(alice, 200, "/v1/ask");
  ASSERT_TRUE(late.ok());
  clock.SetMillis(kMidnight * 1000);
  QuotaStatus s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 0);
  EXPECT_EQ(s.reserved, 200);
  EXPECT_EQ(s.resets_at, kMidnight + 86400);
  ASSERT_TRUE(late->Settle(60, 40).ok());
  s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 100);
  EXPECT_EQ(s.remaining, 1100);

  Result<UsageReport> report = quota.GetUsage(alice, 7);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->days.size(), 2u);
  EXPECT_EQ(report->days[0].day, "2026-11-29");
  EXPECT_EQ(report->days[0].prompt_tokens, 900);
  EXPECT_EQ(report->days[1].day, "2026-11-30");
  EXPECT_EQ(report->days[1].completion_tokens, 40);
  EXPECT_EQ(report->quota.used, 100);
}

TEST_P(Quota, MonthlyPeriodAcrossRestartAndRollover) {
  ManualClock clock(testing::kNoonMillis);
  User alice;
  {
    auto accounts = Open(&clock, WithBudget(1000, Period::kMonth));
    ASSERT_TRUE(accounts);
    alice = MakeUser(*accounts, "alice");
    ASSERT_TRUE(accounts->quota().Charge(alice, 400, 0, "/v1/ask").ok());
    clock.SetMillis(kMidnight * 1000);  // next day, same month
    ASSERT_TRUE(accounts->quota().Charge(alice, 0, 500, "/v1/ask").ok());
  }
  auto accounts = Open(&clock, WithBudget(1000, Period::kMonth));
  ASSERT_TRUE(accounts);
  QuotaStatus s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 900);
  EXPECT_EQ(s.period, Period::kMonth);
  EXPECT_EQ(s.resets_at, kDecember);
  Refusal refusal;
  EXPECT_FALSE(accounts->quota().Reserve(alice, 101, "/v1/ask", &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 86400);

  clock.SetMillis(kDecember * 1000);
  s = StatusOf(*accounts, alice);
  EXPECT_EQ(s.used, 0);
  EXPECT_EQ(s.remaining, 1000);
  EXPECT_TRUE(accounts->quota().Reserve(alice, 1000, "/v1/ask").ok());
}

// Two replicas (two Accounts, each with its own connection) on one store:
// eight threads on each spend one user's budget, which holds across them.
TEST_P(Quota, TwoReplicasNeverOverspendOneBudgetTogether) {
  ManualClock clock(testing::kNoonMillis);
  constexpr int64_t kBudget = 20000;
  auto a = Open(&clock, WithBudget(kBudget));
  auto b = Open(&clock, WithBudget(kBudget));
  ASSERT_TRUE(a && b);
  User alice = MakeUser(*a, "alice");

  Spenders spenders;
  spenders.budget = kBudget;
  spenders.Run(alice, 60, [&](int t) -> QuotaLedger& { return (t % 2 == 0 ? a : b)->quota(); });
  EXPECT_FALSE(spenders.overspent);
  EXPECT_GT(spenders.refused.load(), 0);  // the budget was actually contended
  for (Accounts* replica : {a.get(), b.get()}) {
    QuotaStatus s = StatusOf(*replica, alice);
    EXPECT_EQ(s.reserved, 0);
    EXPECT_EQ(s.used, spenders.settled.load());
    EXPECT_LE(s.used, kBudget);
  }
  Result<std::vector<DayUsage>> days = b->quota().DailyUsage(alice.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].requests, spenders.granted.load());
}

// A hold of one replica counts on the other while it lives; the hold of a
// replica that died (a row nobody renews) stops counting after its lease.
TEST_P(Quota, HoldsCountOnEveryReplicaUntilTheirLeaseEnds) {
  ManualClock clock(testing::kNoonMillis);
  auto a = Open(&clock, WithBudget(1000));
  auto b = Open(&clock, WithBudget(1000));
  ASSERT_TRUE(a && b);
  User alice = MakeUser(*a, "alice");

  Result<Reservation> on_a = a->quota().Reserve(alice, 600, "/v1/ask");
  ASSERT_TRUE(on_a.ok()) << on_a.status().ToString();
  Refusal refusal;
  EXPECT_EQ(b->quota().Reserve(alice, 500, "/v1/ask", &refusal).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal.remaining_tokens, 400);
  EXPECT_EQ(refusal.retry_after_s, 1);  // fits once A's request ends
  // A renews its hold whenever it looks (and every kHoldLeaseSeconds / 3 on
  // its own): still held on B two leases later.
  clock.AdvanceMillis(2 * kHoldLeaseSeconds * 1000);
  ASSERT_TRUE(a->quota().GetStatus(alice).ok());
  EXPECT_EQ(StatusOf(*b, alice).reserved, 600);
  ASSERT_TRUE(on_a->Settle(100, 50).ok());
  a->quota().Flush();
  QuotaStatus s = StatusOf(*b, alice);
  EXPECT_EQ(s.used, 150);
  EXPECT_EQ(s.reserved, 0);

  // A replica killed with a request in flight: its row holds 700 and has
  // been charged 40, and nobody renews it.
  const int64_t now = clock.NowSeconds();
  {
    auto db = testing::OpenDb(store());
    ASSERT_TRUE(db.ok());
    auto lock = (*db)->Lock();
    auto insert = (*db)->Prepare(
        "INSERT INTO usage (user_id, route, prompt_tokens, completion_tokens, created_at, completed, held, "
        "held_until) VALUES (?, '/v1/ask', 40, 0, ?, 0, 700, ?)");
    ASSERT_TRUE(insert.ok());
    insert->Bind(1, alice.id).Bind(2, now).Bind(3, now + kHoldLeaseSeconds);
    ASSERT_TRUE(insert->Run().ok());
  }
  s = StatusOf(*a, alice);
  EXPECT_EQ(s.used, 190);
  EXPECT_EQ(s.reserved, 660);
  EXPECT_FALSE(a->quota().Reserve(alice, 200, "/v1/ask").ok());
  clock.AdvanceMillis(kHoldLeaseSeconds * 1000);
  s = StatusOf(*a, alice);
  EXPECT_EQ(s.used, 190);  // what it was charged stays charged
  EXPECT_EQ(s.reserved, 0);
  EXPECT_TRUE(b->quota().Reserve(alice, 810, "/v1/ask").ok());
}

RAGD_ON_BOTH_STORES(Quota);

}  // namespace
}  // namespace ragd::accounts
