#include "accounts/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.h"

namespace ragd::accounts {
namespace {

// The buckets live in the store; a private in-memory one per limiter here.
std::shared_ptr<Db> MemoryDb() {
  Result<std::unique_ptr<Db>> db = Db::Open(":memory:");
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::shared_ptr<Db>(std::move(*db)) : nullptr;
}

TEST(RateLimiter, RequestsPerMinuteRefuseThenRecover) {
  ManualClock clock(1'000'000);
  RateLimiter limiter(MemoryDb(), &clock, RateLimitOptions{6, 0});  // one request per 10 s sustained
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(limiter.Admit(1, 100).ok()) << i;
  Refusal refusal;
  Status refused = limiter.Admit(1, 100, &refusal);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal.retry_after_s, 10);
  EXPECT_EQ(refusal.remaining_tokens, -1);
  EXPECT_TRUE(limiter.Admit(2, 100).ok());  // another user is not affected

  clock.AdvanceSeconds(9);
  EXPECT_FALSE(limiter.Admit(1, 100, &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 1);
  clock.AdvanceSeconds(1);
  EXPECT_TRUE(limiter.Admit(1, 100).ok());
  EXPECT_FALSE(limiter.Admit(1, 100).ok());

  clock.AdvanceSeconds(60);  // a full minute: a full burst again, never more
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(limiter.Admit(1, 100).ok()) << i;
  EXPECT_FALSE(limiter.Admit(1, 100).ok());
}

TEST(RateLimiter, TokensPerMinuteWithRefundAndOversizedRequests) {
  ManualClock clock(1'000'000);
  RateLimiter limiter(MemoryDb(), &clock, RateLimitOptions{0, 6000});  // 100 tokens per second
  EXPECT_TRUE(limiter.Admit(1, 5000).ok());
  Refusal refusal;
  EXPECT_FALSE(limiter.Admit(1, 1500, &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 5);  // needs 500 more at 100/s
  // A refusal takes nothing: a smaller request still fits.
  EXPECT_TRUE(limiter.Admit(1, 1000).ok());
  limiter.Refund(1, 800);  // the request used less than it was admitted for
  EXPECT_TRUE(limiter.Admit(1, 800).ok());
  EXPECT_FALSE(limiter.Admit(1, 1).ok());

  // Bigger than a minute's allowance: admitted only from a full bucket, then in debt.
  EXPECT_FALSE(limiter.Admit(1, 9000, &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 60);
  clock.AdvanceSeconds(60);
  EXPECT_TRUE(limiter.Admit(1, 9000).ok());
  clock.AdvanceSeconds(30);  // 3000 in debt + 3000 refilled = 0
  EXPECT_FALSE(limiter.Admit(1, 1, &refusal).ok());
  EXPECT_EQ(refusal.retry_after_s, 1);
  clock.AdvanceSeconds(1);
  EXPECT_TRUE(limiter.Admit(1, 100).ok());
}

TEST(RateLimiter, BothLimitsAndUnlimited) {
  ManualClock clock(1'000'000);
  RateLimiter both(MemoryDb(), &clock, RateLimitOptions{2, 1000});
  EXPECT_TRUE(both.Admit(1, 900).ok());
  Refusal refusal;
  EXPECT_FALSE(both.Admit(1, 200, &refusal).ok());  // tokens short, requests fine
  EXPECT_TRUE(both.Admit(1, 100).ok());
  EXPECT_FALSE(both.Admit(1, 0, &refusal).ok());  // requests short
  EXPECT_EQ(refusal.retry_after_s, 30);

  RateLimiter unlimited(MemoryDb(), &clock, RateLimitOptions{0, 0});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(unlimited.Admit(1, 1'000'000).ok());
}

TEST(RateLimiter, ConcurrentAdmitsNeverPassTheLimit) {
  ManualClock clock(1'000'000);  // frozen: no refill during the test
  RateLimiter limiter(MemoryDb(), &clock, RateLimitOptions{100, 0});
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) admitted += limiter.Admit(7, 1).ok() ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 100);
}

// Two replicas (two limiters, each on its own connection to one store) draw
// from the same buckets: together they admit one minute's allowance, once.
class SharedRateLimits : public testing::BackendTest {};

TEST_P(SharedRateLimits, TwoReplicasDrawFromOneBucket) {
  ManualClock clock(1'000'000);  // frozen: no refill during the test
  ASSERT_TRUE(Open(&clock));     // makes the schema
  auto db_a = testing::OpenDb(store());
  auto db_b = testing::OpenDb(store());
  ASSERT_TRUE(db_a.ok() && db_b.ok());
  RateLimiter a(std::move(*db_a), &clock, RateLimitOptions{40, 4000});
  RateLimiter b(std::move(*db_b), &clock, RateLimitOptions{40, 4000});
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      RateLimiter& limiter = t % 2 == 0 ? a : b;
      for (int i = 0; i < 10; ++i) admitted += limiter.Admit(7, 10).ok() ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 40);
  Refusal refusal;
  EXPECT_EQ(b.Admit(7, 0, &refusal).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal.retry_after_s, 2);  // one request per 1.5 s

  // Tokens refunded on one replica are there for the other.
  clock.AdvanceSeconds(60);
  ASSERT_TRUE(a.Admit(7, 4000).ok());
  EXPECT_FALSE(b.Take(7, 1000).ok());
  a.Refund(7, 1000);
  a.Flush();  // b's payments wait for b's own refunds only
  EXPECT_TRUE(b.Take(7, 1000).ok());
}

RAGD_ON_BOTH_STORES(SharedRateLimits);

}  // namespace
}  // namespace ragd::accounts
