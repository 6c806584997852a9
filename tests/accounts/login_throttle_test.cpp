// Sign-in backoff: free attempts, then exponential and bounded waits, per
// account name and per client address.
#include "accounts/login_throttle.h"

#include <gtest/gtest.h>

#include "tests/accounts/test_support.h"

namespace ragd::accounts {
namespace {

LoginThrottleOptions Options() {
  LoginThrottleOptions o;
  o.account_free_failures = 3;
  o.address_free_failures = 10;
  o.base_delay_s = 1;
  o.max_delay_s = 8;
  o.forget_after_s = 60;
  return o;
}

TEST(LoginThrottle, AccountWaitsDoubleUpToTheBound) {
  ManualClock clock(testing::kNoonMillis);
  LoginThrottle throttle(&clock, Options());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(throttle.RetryAfter("Alice", "10.0.0.1"), 0);
    throttle.RecordFailure("alice", "10.0.0.1");
  }
  // Names compare ignoring case; another address does not help.
  EXPECT_EQ(throttle.RetryAfter("ALICE", "10.0.0.2"), 1);
  EXPECT_EQ(throttle.RetryAfter("bob", "10.0.0.2"), 0);
  const int64_t expected[] = {2, 4, 8, 8, 8};
  for (int64_t wait : expected) {
    clock.AdvanceSeconds(throttle.RetryAfter("alice", "x"));
    throttle.RecordFailure("alice", "x");
    EXPECT_EQ(throttle.RetryAfter("alice", "y"), wait);
  }
  // Success clears the account.
  throttle.RecordSuccess("Alice");
  EXPECT_EQ(throttle.RetryAfter("alice", "y"), 0);
}

TEST(LoginThrottle, AddressCountsAcrossAccountsAndSuccessDoesNotClearIt) {
  ManualClock clock(testing::kNoonMillis);
  LoginThrottle throttle(&clock, Options());
  for (int i = 0; i < 10; ++i) throttle.RecordFailure("user" + std::to_string(i), "10.0.0.9");
  throttle.RecordSuccess("user0");
  EXPECT_EQ(throttle.RetryAfter("someone-else", "10.0.0.9"), 1);
  EXPECT_EQ(throttle.RetryAfter("someone-else", "10.0.0.8"), 0);
}

TEST(LoginThrottle, QuietKeysAreForgottenAndMemoryIsBounded) {
  ManualClock clock(testing::kNoonMillis);
  LoginThrottleOptions o = Options();
  o.max_entries = 4;
  LoginThrottle throttle(&clock, o);
  for (int i = 0; i < 6; ++i) throttle.RecordFailure("alice", "a");
  EXPECT_GT(throttle.RetryAfter("alice", "b"), 0);
  clock.AdvanceSeconds(61);
  EXPECT_EQ(throttle.RetryAfter("alice", "b"), 0);
  throttle.RecordFailure("alice", "a");  // counts from one again
  EXPECT_EQ(throttle.RetryAfter("alice", "b"), 0);
  // Many keys: the oldest go first, the newest stay.
  for (int i = 0; i < 6; ++i) {
    clock.AdvanceMillis(1);
    for (int k = 0; k < 4; ++k) throttle.RecordFailure("n" + std::to_string(i), "addr" + std::to_string(i));
  }
  EXPECT_GT(throttle.RetryAfter("n5", "z"), 0);
  EXPECT_EQ(throttle.RetryAfter("n0", "z"), 0);
}

}  // namespace
}  // namespace ragd::accounts
