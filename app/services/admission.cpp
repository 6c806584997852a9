#include "app/services/admission.h"

#include <algorithm>
#include <utility>

#include "app/http/json_request.h"

namespace ragd::app {

Admission& Admission::operator=(Admission&& other) noexcept {
  if (this != &other) {
    Leave();
    limiter_ = other.limiter_;
    user_id_ = other.user_id_;
    budget_ = other.budget_;
    in_flight_ = std::exchange(other.in_flight_, false);
    reservation_ = std::move(other.reservation_);
  }
  return *this;
}

void Admission::Leave() {
  if (std::exchange(in_flight_, false) && limiter_ != nullptr) limiter_->Leave(user_id_);
}

void Admission::Report(int64_t prompt_tokens, int64_t completion_tokens) {
  reservation_.Report(prompt_tokens, completion_tokens);
}

bool Admission::Settle(int64_t prompt_tokens, int64_t completion_tokens, bool completed) {
  bool final_row = false;
  if (completed) {
    final_row = reservation_.Settle(prompt_tokens, completion_tokens).ok();
  } else {
    reservation_.Report(prompt_tokens, completion_tokens);
    reservation_.Release();
  }
  const int64_t unused = budget_ - prompt_tokens - completion_tokens;
  if (unused > 0 && limiter_ != nullptr) limiter_->Refund(user_id_, unused);
  Leave();
  return final_row;
}

void Admission::Cancel() {
  reservation_.Release();
  if (limiter_ != nullptr) limiter_->Refund(user_id_, budget_);
  Leave();
}

std::optional<HttpResponse> Admission::Resize(Metrics& metrics, int64_t budget) {
  if (limiter_ == nullptr || budget == budget_) return std::nullopt;
  if (budget < budget_) {
    limiter_->Refund(user_id_, budget_ - budget);
    (void)reservation_.Resize(budget);
    budget_ = budget;
    return std::nullopt;
  }
  accounts::Refusal refusal;
  if (Status st = limiter_->Take(user_id_, budget - budget_, &refusal); !st.ok()) {
    if (st.code() != StatusCode::kResourceExhausted) return ErrorResponse(st);
    metrics.CountRateLimitRejection();
    return RefusalResponse(st, refusal, /*quota=*/false);
  }
  if (Status st = reservation_.Resize(budget, &refusal); !st.ok()) {
    limiter_->Refund(user_id_, budget - budget_);
    if (st.code() != StatusCode::kResourceExhausted) return ErrorResponse(st);
    metrics.CountQuotaRejection();
    return RefusalResponse(st, refusal, /*quota=*/true);
  }
  budget_ = budget;
  return std::nullopt;
}

std::optional<HttpResponse> Admit(AppContext& ctx, const accounts::User& user, int64_t budget,
                                  const std::string& route, Admission* admitted) {
  accounts::RateLimiter& limiter = ctx.accounts->rate_limiter();
  accounts::Refusal refusal;
  if (Status st = limiter.Enter(user.id, &refusal); !st.ok()) {
    ctx.metrics.CountRateLimitRejection();
    return RefusalResponse(st, refusal, /*quota=*/false);
  }
  if (Status st = limiter.Admit(user.id, budget, &refusal); !st.ok()) {
    limiter.Leave(user.id);
    if (st.code() != StatusCode::kResourceExhausted) return ErrorResponse(st);
    ctx.metrics.CountRateLimitRejection();
    return RefusalResponse(st, refusal, /*quota=*/false);
  }
  auto reservation = ctx.accounts->quota().Reserve(user, budget, route, &refusal);
  if (!reservation.ok()) {
    limiter.Refund(user.id, budget);
    limiter.Leave(user.id);
    if (reservation.status().code() != StatusCode::kResourceExhausted)
      return ErrorResponse(reservation.status());
    ctx.metrics.CountQuotaRejection();
    return RefusalResponse(reservation.status(), refusal, /*quota=*/true);
  }
  *admitted = Admission();
  admitted->limiter_ = &limiter;
  admitted->user_id_ = user.id;
  admitted->budget_ = budget;
  admitted->in_flight_ = true;
  admitted->reservation_ = std::move(reservation).value();
  return std::nullopt;
}

std::optional<HttpResponse> AdmitRequest(AppContext& ctx, const accounts::User& user) {
  accounts::Refusal refusal;
  Status st = ctx.accounts->rate_limiter().Admit(user.id, 0, &refusal);
  if (st.ok()) return std::nullopt;
  if (st.code() != StatusCode::kResourceExhausted) return ErrorResponse(st);
  ctx.metrics.CountRateLimitRejection();
  return RefusalResponse(st, refusal, /*quota=*/false);
}

HttpResponse ContextLengthRefusal(Metrics& metrics, const std::string& message, int64_t n_prompt_tokens,
                                  int64_t n_ctx) {
  metrics.CountContextLengthError();
  Json err = {{"code", 400},
              {"type", "exceed_context_size_error"},
              {"message", message},
              {"n_prompt_tokens", n_prompt_tokens},
              {"n_ctx", n_ctx}};
  return JsonResponse(400, {{"error", err}});
}

HttpResponse RefusalResponse(const Status& status, const accounts::Refusal& refusal, bool quota) {
  Json err = {
      {"code", 429}, {"type", quota ? "quota_exceeded" : "rate_limit_error"}, {"message", status.message()}};
  if (quota) err["remaining_tokens"] = refusal.remaining_tokens;
  HttpResponse r = JsonResponse(429, {{"error", err}});
  r.headers.push_back({"Retry-After", std::to_string(std::max<int64_t>(1, refusal.retry_after_s))});
  return r;
}

}  // namespace ragd::app
