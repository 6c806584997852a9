#include "accounts/rate_limiter.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace ragd::accounts {
namespace {

constexpr int64_t kScale = 60000;  // ms per minute; bucket units per whole request/token

// Whether a bucket of `per_minute` at scaled `level` can pay `need` whole units
// (see the header on debt).
bool CanPay(int64_t level, int64_t per_minute, int64_t need) {
  int64_t capacity = per_minute * kScale;
  return level >= need * kScale || (need > per_minute && level >= capacity);
}

// Whole seconds until a bucket of `per_minute` at scaled `level` can pay `need`.
int64_t SecondsUntil(int64_t level, int64_t per_minute, int64_t need) {
  int64_t target = std::min(need, per_minute) * kScale;
  int64_t ms = (target - level + per_minute - 1) / per_minute;  // refills per_minute scaled units per ms
  return std::max<int64_t>(1, (ms + 999) / 1000);
}

int64_t Refilled(int64_t level, int64_t per_minute, int64_t elapsed_ms) {
  int64_t capacity = per_minute * kScale;
  return std::min(capacity, level + std::min(elapsed_ms, kScale) * per_minute);
}

}  // namespace

RateLimiter::RateLimiter(std::shared_ptr<Db> db, const Clock* clock, RateLimitOptions options)
    : db_(std::move(db)), clock_(clock), options_(options) {}

void RateLimiter::Refill(Buckets& b, int64_t now_ms) const {
  int64_t elapsed = std::max<int64_t>(0, now_ms - b.updated_ms);
  b.updated_ms = std::max(b.updated_ms, now_ms);
  b.requests = Refilled(b.requests, options_.requests_per_minute, elapsed);
  b.tokens = Refilled(b.tokens, options_.tokens_per_minute, elapsed);
}

Status RateLimiter::WithBuckets(int64_t user_id, const std::function<Status(Buckets&)>& change) {
  const int64_t now_ms = clock_->NowMillis();
  auto lock = db_->Lock();
  return db_->InTransaction([&]() -> Status {
    // A full bucket for a user met for the first time; then a no-op write
    // whose row lock makes the replicas' payments of one user take turns
    // (SQLite's write transaction already serializes them all).
    Result<Statement> make = db_->Prepare(
        "INSERT INTO rate_buckets (user_id, requests, tokens, updated_ms) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (user_id) DO NOTHING");
    if (!make.ok()) return make.status();
    make->Bind(1, user_id).Bind(2, options_.requests_per_minute * kScale);
    make->Bind(3, options_.tokens_per_minute * kScale).Bind(4, now_ms);
    RAGD_RETURN_IF_ERROR(make->Run());
    Result<Statement> turn =
        db_->Prepare("UPDATE rate_buckets SET updated_ms = updated_ms WHERE user_id = ?");
    if (!turn.ok()) return turn.status();
    turn->Bind(1, user_id);
    RAGD_RETURN_IF_ERROR(turn->Run());
    Result<Statement> read =
        db_->Prepare("SELECT requests, tokens, updated_ms FROM rate_buckets WHERE user_id = ?");
    if (!read.ok()) return read.status();
    read->Bind(1, user_id);
    Result<bool> row = read->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("the rate-limit bucket row vanished");
    Buckets b{read->ColumnInt(0), read->ColumnInt(1), read->ColumnInt(2)};
    Refill(b, now_ms);
    RAGD_RETURN_IF_ERROR(change(b));
    Result<Statement> write =
        db_->Prepare("UPDATE rate_buckets SET requests = ?, tokens = ?, updated_ms = ? WHERE user_id = ?");
    if (!write.ok()) return write.status();
    write->Bind(1, b.requests).Bind(2, b.tokens).Bind(3, b.updated_ms).Bind(4, user_id);
    return write->Run();
  });
}

Status RateLimiter::Admit(int64_t user_id, int64_t tokens, Refusal* refusal) {
  return Pay(user_id, 1, tokens, refusal);
}

Status RateLimiter::Take(int64_t user_id, int64_t tokens, Refusal* refusal) {
  return Pay(user_id, 0, tokens, refusal);
}

Status RateLimiter::Pay(int64_t user_id, int64_t requests, int64_t tokens, Refusal* refusal) {
  if (tokens < 0) return Status::InvalidArgument("token count must be >= 0");
  tokens = std::min<int64_t>(tokens, int64_t{1} << 40);  // keeps tokens * kScale in range
  const int64_t rpm = options_.requests_per_minute;
  const int64_t tpm = options_.tokens_per_minute;
  if (rpm <= 0 && tpm <= 0) return Status::Ok();
  writer_.Flush();  // this replica's refunds so far are in the buckets
  return WithBuckets(user_id, [&](Buckets& b) -> Status {
    bool requests_ok = rpm <= 0 || CanPay(b.requests, rpm, requests);
    bool tokens_ok = tpm <= 0 || CanPay(b.tokens, tpm, tokens);
    if (requests_ok && tokens_ok) {
      if (rpm > 0) b.requests -= requests * kScale;
      if (tpm > 0) b.tokens -= tokens * kScale;
      return Status::Ok();
    }
    int64_t wait = 1;
    if (!requests_ok) wait = std::max(wait, SecondsUntil(b.requests, rpm, 1));
    if (!tokens_ok) wait = std::max(wait, SecondsUntil(b.tokens, tpm, tokens));
    if (refusal) *refusal = Refusal{wait, -1};
    std::string what = !requests_ok ? std::to_string(rpm) + " requests per minute"
                                    : std::to_string(tpm) + " tokens per minute";
    return Status::ResourceExhausted("rate limit of " + what + " reached; retry in " + std::to_string(wait) +
                                     " s");
  });
}

void RateLimiter::Refund(int64_t user_id, int64_t tokens) {
  const int64_t tpm = options_.tokens_per_minute;
  if (tpm <= 0 || tokens <= 0) return;
  tokens = std::min(tokens, tpm);
  writer_.Post([this, user_id, tokens, tpm] {
    Status st = WithBuckets(user_id, [&](Buckets& b) -> Status {
      b.tokens = std::min(tpm * kScale, b.tokens + tokens * kScale);
      return Status::Ok();
    });
    if (!st.ok())
      std::fprintf(stderr, "ragd: cannot refund %lld rate-limit tokens: %s\n", static_cast<long long>(tokens),
                   st.message().c_str());
  });
}

Status RateLimiter::Enter(int64_t user_id, Refusal* refusal) {
  const int64_t max = options_.max_in_flight;
  std::lock_guard<std::mutex> lock(mu_);
  int64_t& n = in_flight_[user_id];
  if (max > 0 && n >= max) {
    if (refusal) *refusal = Refusal{1, -1};
    return Status::ResourceExhausted("you already have " + std::to_string(n) +
                                     " requests running or queued, the most one user may have; "
                                     "retry when one has finished");
  }
  ++n;
  return Status::Ok();
}

void RateLimiter::Leave(int64_t user_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_flight_.find(user_id);
  if (it == in_flight_.end()) return;
  if (--it->second <= 0) in_flight_.erase(it);
}

}  // namespace ragd::accounts
