// Per-user rate limits: requests per minute and tokens per minute.
//
// Each limit is a token bucket holding up to one minute's allowance and
// refilling continuously at allowance/60 per second: a user may burst up to
// the per-minute figure, then sustain that rate. A request costing more
// tokens than a whole minute's allowance is admitted only when the bucket is
// full, and leaves it in debt (otherwise it could never pass).
//
// The buckets live in the store (table rate_buckets), so that every replica
// on one PostgreSQL draws from the same ones: a user gets the per-minute
// rates once, not once per replica. Each payment is one transaction that
// holds the user's bucket row; refunds are posted to a writer thread of the
// limiter's own (Settle runs on the inference thread, which must not wait on
// the store). A user's buckets are created on first use, full.
//
// The cap on requests in flight stays in each replica's memory: it keeps one
// user from filling that replica's own queue.
//
// Thread-safety: safe from any number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "accounts/quota.h"
#include "accounts/store_writer.h"
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
  RateLimiter(std::shared_ptr<Db> db, const Clock* clock, RateLimitOptions options);

  // Admits one request of `tokens` (>= 0) for `user_id`, taking 1 request and
  // `tokens` from the buckets, or takes nothing and answers
  // ResourceExhausted (HTTP 429 rate_limit_error) with `refusal->retry_after_s`
  // = whole seconds until both buckets could cover it. A store error is
  // returned as it is.
  Status Admit(int64_t user_id, int64_t tokens, Refusal* refusal = nullptr);
  // Takes `tokens` more for a request already admitted (its estimate was
  // short), or takes nothing and answers ResourceExhausted like Admit.
  Status Take(int64_t user_id, int64_t tokens, Refusal* refusal = nullptr);
  // Gives back tokens admitted but not used (reserved max_tokens minus the
  // real count), up to a full bucket. Never waits for the store.
  void Refund(int64_t user_id, int64_t tokens);
  // Returns once the refunds posted so far are in the store (Admit and Take
  // wait for them too).
  void Flush() { writer_.Flush(); }

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
  // Refills `b` up to now.
  void Refill(Buckets& b, int64_t now_ms) const;
  // In one transaction that holds the user's bucket row (made full when
  // missing), refilled to now: `change` edits the buckets and says whether
  // to keep the edit (false: roll back).
  Status WithBuckets(int64_t user_id, const std::function<Status(Buckets&)>& change);
  // Takes `requests` (0 or 1) and `tokens`, or nothing with the refusal.
  Status Pay(int64_t user_id, int64_t requests, int64_t tokens, Refusal* refusal);

  std::shared_ptr<Db> db_;
  const Clock* clock_;
  RateLimitOptions options_;
  std::mutex mu_;
  std::unordered_map<int64_t, int64_t> in_flight_;  // guarded by mu_; users with none are absent
  StoreWriter writer_;                              // last: its refunds use the rest
};

}  // namespace ragd::accounts
