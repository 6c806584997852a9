#include "accounts/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ragd::accounts {
namespace {

TEST(RateLimiter, RequestsPerMinuteRefuseThenRecover) {
  ManualClock clock(1'000'000);
  RateLimiter limiter(&clock, RateLimitOptions{6, 0});  // one request per 10 s sustained
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
  RateLimiter limiter(&clock, RateLimitOptions{0, 6000});  // 100 tokens per second
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
  RateLimiter both(&clock, RateLimitOptions{2, 1000});
  EXPECT_TRUE(both.Admit(1, 900).ok());
  Refusal refusal;
  EXPECT_FALSE(both.Admit(1, 200, &refusal).ok());  // tokens short, requests fine
  EXPECT_TRUE(both.Admit(1, 100).ok());
  EXPECT_FALSE(both.Admit(1, 0, &refusal).ok());  // requests short
  EXPECT_EQ(refusal.retry_after_s, 30);

  RateLimiter unlimited(&clock, RateLimitOptions{0, 0});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(unlimited.Admit(1, 1'000'000).ok());
}

TEST(RateLimiter, ConcurrentAdmitsNeverPassTheLimit) {
  ManualClock clock(1'000'000);  // frozen: no refill during the test
  RateLimiter limiter(&clock, RateLimitOptions{100, 0});
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

}  // namespace
}  // namespace ragd::accounts
