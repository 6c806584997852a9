// Per-user rate limits: requests per minute and tokens per minute.
//
// Each limit is a token bucket holding up to one minute's allowance and
// refilling continuously at allowance/60 per second: a user may burst up to
// the per-minute figure, then sustain that rate. A request costing more
// tokens than a whole minute's allowance is admitted only when the bucket is
// full, and leaves it in debt (otherwise it could never pass).
//
// State is in memory only (it resets on restart) and each user's buckets are
// created on first use, full.
//
// Thread-safety: safe from any number of threads (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "accounts/clock.h"
#include "accounts/quota.h"
#include "common/status.h"

namespace ragd::accounts {

struct RateLimitOptions {
  int64_t requests_per_minute = 60;   // per user; 0 = unlimited
  int64_t tokens_per_minute = 50000;  // per user (prompt + max_tokens as reserved); 0 = unlimited
  int64_t max_in_flight = 8;          // per user: requests admitted and not finished; 0 = unlimited
};

class RateLimiter {
 public:
  // `clock` must outlive the limiter.
  RateLimiter(const Clock* clock, RateLimitOptions options);

  // Admits one request of `tokens` (>= 0) for `user_id`, taking 1 request and
  // `tokens` from the buckets, or takes nothing and answers
  // ResourceExhausted (HTTP 429 rate_limit_error) with `refusal->retry_after_s`
  // = whole seconds until both buckets could cover it.
  Status Admit(int64_t user_id, int64_t tokens, Refusal* refusal = nullptr);
  // Takes `tokens` more for a request already admitted (its estimate was
  // short), or takes nothing and answers ResourceExhausted like Admit.
  Status Take(int64_t user_id, int64_t tokens, Refusal* refusal = nullptr);
  // Gives back tokens admitted but not used (reserved max_tokens minus the
  // real count), up to a full bucket.
  void Refund(int64_t user_id, int64_t tokens);

  // Counts one more request of `user_id` in flight (running or queued), or
  // answers ResourceExhausted when it already has max_in_flight: one user
  // cannot fill the server's queue. Every Ok is matched by one Leave().
  Status Enter(int64_t user_id, Refusal* refusal = nullptr);
  void Leave(int64_t user_id);

 private:
  // Levels are kept exactly in integers scaled by 60000 (ms per minute), so
  // one millisecond refills exactly `per_minute` units.
  struct Buckets {
    int64_t requests = 0;    // available requests x 60000
    int64_t tokens = 0;      // available tokens x 60000
    int64_t updated_ms = 0;  // time of the last refill
  };
  // Refills `b` up to now. Caller holds mu_.
  void Refill(Buckets& b, int64_t now_ms) const;
  Buckets& Find(int64_t user_id, int64_t now_ms);  // caller holds mu_
  // Takes `requests` (0 or 1) and `tokens`, or nothing with the refusal.
  Status Pay(int64_t user_id, int64_t requests, int64_t tokens, Refusal* refusal);

  const Clock* clock_;
  RateLimitOptions options_;
  std::mutex mu_;
  std::unordered_map<int64_t, Buckets> users_;      // guarded by mu_
  std::unordered_map<int64_t, int64_t> in_flight_;  // guarded by mu_; users with none are absent
};

}  // namespace ragd::accounts
