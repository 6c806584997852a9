// Token quotas: each user has a budget of tokens per UTC day or month.
//
// Protocol for one request:
//   1. Reserve(user, prompt_tokens + max_tokens, route) before generating.
//      Refused with ResourceExhausted (HTTP 429 quota_exceeded) when the
//      budget cannot cover it; the Refusal says what remains and when to retry.
//   2. Generate; optionally Report() the running counts as tokens are made.
//   3. Settle(prompt_tokens, completion_tokens) with the real counts: they are
//      charged, the rest of the reservation is returned, and the request's
//      usage row (user, route, prompt, completion, time) keeps them.
//   A Reservation dropped or Release()d without Settle (client gone, error,
//   cancel) charges what was last Report()ed; its row goes when that is zero.
//
// Durability: the usage row of a reservation is inserted by Reserve (no
// tokens yet, the reservation held), written at its first Report() with
// tokens (the prompt, once it is computed, and the first answer token),
// updated every kCheckpointTokens / 2 reported tokens after that, and finally
// at Settle or Release. The rows are written by the ledger's own thread in the
// order posted; Report, Settle and Release never wait for them (the inference
// thread calls them). OnWritten tells the reservation's owner, on the
// ledger's thread, what each write put in the store; written_tokens() says
// the same. An owner that sends a token only while the tokens sent stay
// within kCheckpointTokens - 1 of the row written, and the final counts only
// once the final row is written, therefore never has more than
// kCheckpointTokens - 1 sent tokens beyond its row in the store: a crash (kill
// -9) loses at most those, never the prompt of an answer that has begun, and a
// finished request is charged exactly. While the store stalls (another
// process's write lock, a slow disk) such an owner holds its answer back and
// the rest of the server goes on. The row a crash leaves behind has
// completed = 0. Flush() waits for everything posted.
//   Embeddings: Reserve(user, input_tokens) then Settle(input_tokens, 0), or
//   Charge() which does both.
//
// Shared budget: the store is the one truth, so that N replicas on one
// PostgreSQL (or processes on one app.db) enforce a user's budget exactly.
// Reserve inserts the request's usage row with `held` = the tokens reserved,
// in a transaction that first locks the user's row and then checks, per
// user and period: used + held + tokens <= limit, where used is the sum of
// the rows of the period and held, over the live holds, what each still
// holds beyond what its row has been charged. Concurrent requests of one
// user, on any replica, therefore never together spend more than the
// budget -- provided each Settle charges at most what was reserved (give the
// engine max_tokens, count the prompt before reserving). A larger Settle is
// still charged in full (the tokens were spent) and documented as the
// caller's bug. Settle and Release end the hold with the row's final write.
//
// Leases: a hold counts while held_until > now. Each checkpoint write moves
// held_until to kHoldLeaseSeconds ahead, and the ledger renews its open holds
// every kHoldLeaseSeconds / 3 (on its own thread, and before a check when its
// clock has moved on), so a hold outlives its replica (kill -9, power loss)
// by at most kHoldLeaseSeconds; the tokens its row was charged stay charged.
//
// Periods: `used` is the sum of the usage rows written inside the current
// period. Holds open across a period boundary stay held and are charged to
// the period in which they are settled.
//
// Thread-safety: QuotaLedger is safe from any number of threads. A
// Reservation has one owner, except Report(), which any thread may call. A
// Reservation keeps the ledger's state alive, so it may outlive the ledger.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "accounts/period.h"
#include "accounts/users.h"
#include "common/status.h"

namespace ragd::accounts {

struct QuotaOptions {
  int64_t tokens_per_period = 200000;  // default budget per user and period; User::token_quota overrides
  Period period = Period::kDay;        // budgets renew each UTC day or month
};

struct QuotaStatus {
  int64_t limit = 0;      // the user's budget this period
  int64_t used = 0;       // tokens charged this period (requests in flight: so far)
  int64_t reserved = 0;   // tokens held beyond that by requests in flight, on any replica
  int64_t remaining = 0;  // max(0, limit - used - reserved)
  Period period = Period::kDay;
  int64_t period_start = 0;  // Unix seconds
  int64_t resets_at = 0;     // Unix seconds: end of this period (FormatUtcTime for the API)
};

// Why a request was refused (quota or rate limit); for the 429 answer.
struct Refusal {
  int64_t retry_after_s = 0;      // value of the Retry-After header, >= 1
  int64_t remaining_tokens = -1;  // quota refusals: tokens left this period; -1 for rate limits
};

// Tokens of one user per UTC day (all routes together).
struct DayUsage {
  std::string day;  // "2026-11-29"
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t requests = 0;            // settled requests (usage rows)
  int64_t successful_answers = 0;  // generations that finished normally (not embeddings, errors or cancels)
};

// GET /v1/usage: the budget now and the last days of usage.
struct UsageReport {
  QuotaStatus quota;           // limit, used, remaining, period, resets_at
  std::vector<DayUsage> days;  // oldest first; days without usage are absent
};

// A held part of a user's budget. Move-only; see the file comment.
class Reservation {
 public:
  Reservation();  // empty: active() is false
  Reservation(Reservation&&) noexcept;
  Reservation& operator=(Reservation&&) noexcept;  // releases the current one first
  ~Reservation();                                  // Release() unless settled

  bool active() const;     // reserved and not yet settled/released
  int64_t tokens() const;  // tokens held (0 when empty)
  int64_t user_id() const;

  // Records the running totals so far (cumulative, not increments). Any
  // thread; never waits for the store.
  void Report(int64_t prompt_tokens, int64_t completion_tokens);
  // Charges the real counts and returns the rest; the usage row follows on
  // the ledger's thread (a failure there is logged: the charge still holds in
  // memory). InvalidArgument for negative counts or when no longer active.
  Status Settle(int64_t prompt_tokens, int64_t completion_tokens);
  // `listener(tokens, final)` runs on the ledger's thread after each write of
  // this reservation's row (done or failed), with the prompt + completion
  // tokens it holds; `final` for the row of Settle or Release. It must not
  // call back into the ledger's writes (Flush) and should be quick.
  void OnWritten(std::function<void(int64_t tokens, bool final)> listener);
  // Prompt + completion tokens in the row as last written (0 before the first write).
  int64_t written_tokens() const;
  // Charges what was reported and returns the rest. Ok when not active.
  Status Release();
  // Holds `tokens` instead of tokens(): a reservation made on an estimate
  // before the exact count was known. Growing is refused (ResourceExhausted,
  // `refusal` filled as by Reserve) when the budget cannot cover it, and the
  // reservation is then unchanged; shrinking always succeeds.
  Status Resize(int64_t tokens, Refusal* refusal = nullptr);

  struct State;

 private:
  friend class QuotaLedger;
  explicit Reservation(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// A hold stops counting this many seconds after its replica last renewed it.
inline constexpr int64_t kHoldLeaseSeconds = 30;

// Reported tokens a crash may lose at most (see Durability above): a
// reservation's row is checkpointed every kCheckpointTokens / 2.
inline constexpr int64_t kCheckpointTokens = 32;

class QuotaLedger {
 public:
  // `clock` must outlive the ledger and every Reservation.
  QuotaLedger(std::shared_ptr<Db> db, const Clock* clock, QuotaOptions options);
  ~QuotaLedger();

  // The budget that applies to `user`.
  int64_t LimitFor(const User& user) const;

  // Holds `tokens` (>= 0) of the user's budget for one request on `route`
  // (e.g. "/v1/chat/completions"; stored in the usage row).
  // Waits for the rows posted so far, then decides in one transaction.
  // ResourceExhausted when used + reserved + tokens would pass the limit,
  // filling `refusal`: remaining budget, and Retry-After = 1 s when the
  // request would fit once requests in flight finish, else the seconds until
  // the period resets. InvalidArgument for negative tokens.
  Result<Reservation> Reserve(const User& user, int64_t tokens, std::string route,
                              Refusal* refusal = nullptr);
  // Same as reservation.Settle(...).
  Status Settle(Reservation& reservation, int64_t prompt_tokens, int64_t completion_tokens);
  // Reserve + Settle in one step, for work whose size is known up front (embeddings).
  Status Charge(const User& user, int64_t prompt_tokens, int64_t completion_tokens, std::string route,
                Refusal* refusal = nullptr);

  // The user's budget now (GET /v1/me, GET /v1/users).
  Result<QuotaStatus> GetStatus(const User& user);
  // Per-day totals of the user's usage rows from `since_unix_s` on, oldest day first.
  Result<std::vector<DayUsage>> DailyUsage(int64_t user_id, int64_t since_unix_s);
  // GetStatus plus DailyUsage over the last `days` UTC days (today included).
  Result<UsageReport> GetUsage(const User& user, int64_t days = 31);

  // Returns once every usage row posted so far is written (the ledger's
  // destructor writes the rest too).
  void Flush();

  struct Core;

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace ragd::accounts
