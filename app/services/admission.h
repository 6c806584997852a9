// Admission of a request that spends tokens, before any work is done: the
// per-user cap on requests in flight, the rate limit (requests and tokens per
// minute) and the quota reservation, each refusal counted in the metrics; the
// context-length check; and, when the request ends, settling what it held.
// The generation runs and /v1/embeddings both go through here, so they
// refuse, refund and report alike.
//
// A generation is admitted on an estimate of its prompt before the prompt is
// built (retrieval, tokenization), so a user out of quota or over a limit
// costs no CPU; Resize() then holds the exact count once it is known.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "accounts/accounts.h"
#include "app/http/http_server.h"
#include "app/ops/metrics.h"
#include "app/services/app_context.h"

namespace ragd::app {

// Tokens admitted for one request: taken from the user's rate-limit bucket
// and held against the quota until settled, and one of the user's requests in
// flight. Move-only. Dropped unsettled, it releases the reservation (charging
// what was reported) and the in-flight place but keeps the bucket as it is.
// Thread-safety: one thread at a time.
class Admission {
 public:
  Admission() = default;
  Admission(Admission&& other) noexcept { *this = std::move(other); }
  Admission& operator=(Admission&& other) noexcept;
  ~Admission() { Leave(); }

  int64_t budget() const { return budget_; }  // tokens taken from the rate limiter

  // Holds `budget` tokens instead of budget(): the exact prompt + max_tokens
  // once the prompt is built. Growing takes the difference from the bucket
  // and the quota, or answers their 429 (the admission is then unchanged);
  // shrinking gives it back.
  std::optional<HttpResponse> Resize(Metrics& metrics, int64_t budget);

  // The running totals (cumulative) while the request runs.
  void Report(int64_t prompt_tokens, int64_t completion_tokens);
  // Charges the real counts; what was held but not spent goes back to the
  // quota and to the rate-limit bucket. An unfinished request (`completed`
  // false: error, cancel) is charged all the same but not counted as a
  // successful answer. True when a completed request's final usage row is on
  // its way to the store (OnWritten hears it with final = true).
  bool Settle(int64_t prompt_tokens, int64_t completion_tokens, bool completed);
  // The quota reservation's row writes (accounts/quota.h: Reservation::OnWritten).
  void OnWritten(std::function<void(int64_t tokens, bool final)> listener) {
    reservation_.OnWritten(std::move(listener));
  }
  bool records_usage() const { return reservation_.active(); }  // a reservation whose rows are written
  // Gives everything back: the request never ran.
  void Cancel();

 private:
  friend std::optional<HttpResponse> Admit(AppContext& ctx, const accounts::User& user, int64_t budget,
                                           const std::string& route, Admission* admitted);
  void Leave();  // gives the in-flight place back, once

  accounts::RateLimiter* limiter_ = nullptr;
  int64_t user_id_ = 0;
  int64_t budget_ = 0;
  bool in_flight_ = false;  // holds one of the user's places (RateLimiter::Enter)
  accounts::Reservation reservation_;
};

// Admits `budget` tokens for `user` on `route` (stored in the usage row):
// a place among the user's requests in flight, the rate limiter, then the
// quota; each refusal gives back what the steps before it took. Returns
// nullopt with `*admitted` set, or the response that refuses the request: 429
// with Retry-After for a limit (counted in the metrics), the error's own
// status for anything else.
std::optional<HttpResponse> Admit(AppContext& ctx, const accounts::User& user, int64_t budget,
                                  const std::string& route, Admission* admitted);

// The request rate limit alone (one request, no tokens), for model routes
// that spend no tokens (/tokenize, /detokenize): nullopt when admitted.
std::optional<HttpResponse> AdmitRequest(AppContext& ctx, const accounts::User& user);

// 400 exceed_context_size_error with the two counts, counted in the metrics:
// a prompt that does not fit is refused, never silently truncated.
HttpResponse ContextLengthRefusal(Metrics& metrics, const std::string& message, int64_t n_prompt_tokens,
                                  int64_t n_ctx);

// 429 for a refused quota or rate limit, with Retry-After.
HttpResponse RefusalResponse(const Status& status, const accounts::Refusal& refusal, bool quota);

}  // namespace ragd::app
