// Admission: the rate limit and the quota together, as every route that
// spends tokens sees them (services/admission.h).
#include "app/services/admission.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accounts/clock.h"

namespace ragd::app {
namespace {

constexpr int64_t kTokensPerMinute = 1000;
constexpr int64_t kMaxInFlight = 2;

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    accounts::AccountsOptions options;
    options.db_path = ":memory:";
    options.clock = &clock_;
    options.rate_limits.requests_per_minute = 0;
    options.rate_limits.tokens_per_minute = kTokensPerMinute;
    options.rate_limits.max_in_flight = kMaxInFlight;
    auto accounts = accounts::Accounts::Open(options);
    ASSERT_TRUE(accounts.ok()) << accounts.status().ToString();
    ctx_.accounts = std::move(accounts).value();
  }

  accounts::User MakeUser(const std::string& name, int64_t quota) {
    accounts::NewUser user;
    user.username = name;
    user.token_quota = quota;
    auto made = ctx_.accounts->users().Create(user);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : accounts::User();
  }

  // Whether the rate limiter still holds a full minute's tokens for `user`
  // (takes them when it does).
  bool BucketIsFull(const accounts::User& user) {
    return ctx_.accounts->rate_limiter().Admit(user.id, kTokensPerMinute).ok();
  }

  static std::string ErrorType(const HttpResponse& r) {
    return nlohmann::json::parse(r.body)["error"]["type"].get<std::string>();
  }

  accounts::ManualClock clock_{1'000'000};
  AppContext ctx_;
};

TEST_F(AdmissionTest, QuotaRefusalGivesTheRateLimitTokensBack) {
  const accounts::User user = MakeUser("small", /*quota=*/100);
  Admission admission;
  auto refused = Admit(ctx_, user, 800, "/v1/embeddings", &admission);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(ErrorType(*refused), "quota_exceeded");
  EXPECT_NE(ctx_.metrics.Render().find("ragd_quota_rejections_total 1\n"), std::string::npos);
  EXPECT_TRUE(BucketIsFull(user));
}

TEST_F(AdmissionTest, RateLimitRefusalIsCountedAsOne) {
  const accounts::User user = MakeUser("busy", /*quota=*/100000);
  Admission first, second;
  ASSERT_FALSE(Admit(ctx_, user, 900, "/v1/completions", &first).has_value());
  auto refused = Admit(ctx_, user, 900, "/v1/completions", &second);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(ErrorType(*refused), "rate_limit_error");
  EXPECT_NE(ctx_.metrics.Render().find("ragd_rate_limit_rejections_total 1\n"), std::string::npos);
  EXPECT_NE(ctx_.metrics.Render().find("ragd_quota_rejections_total 0\n"), std::string::npos);
}

TEST_F(AdmissionTest, SettleRefundsWhatWasNotUsed) {
  const accounts::User user = MakeUser("settled", /*quota=*/100000);
  Admission admission;
  ASSERT_FALSE(Admit(ctx_, user, 1000, "/v1/chat/completions", &admission).has_value());
  EXPECT_FALSE(BucketIsFull(user));
  admission.Settle(/*prompt_tokens=*/10, /*completion_tokens=*/20, /*completed=*/true);
  // 970 of 1000 came back: a request of 970 passes, one more token does not.
  EXPECT_FALSE(ctx_.accounts->rate_limiter().Admit(user.id, 971).ok());
  EXPECT_TRUE(ctx_.accounts->rate_limiter().Admit(user.id, 970).ok());
  auto status = ctx_.accounts->quota().GetStatus(user);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->used, 30);
  EXPECT_EQ(status->reserved, 0);
}

TEST_F(AdmissionTest, CancelGivesEverythingBack) {
  const accounts::User user = MakeUser("cancelled", /*quota=*/100000);
  Admission admission;
  ASSERT_FALSE(Admit(ctx_, user, 1000, "/v1/ask", &admission).has_value());
  admission.Cancel();
  EXPECT_TRUE(BucketIsFull(user));
  auto status = ctx_.accounts->quota().GetStatus(user);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->used, 0);
  EXPECT_EQ(status->reserved, 0);
}

TEST_F(AdmissionTest, OneUserHoldsAtMostMaxInFlightRequests) {
  const accounts::User user = MakeUser("greedy", /*quota=*/100000);
  const accounts::User other = MakeUser("other", /*quota=*/100000);
  Admission first, second, third;
  ASSERT_FALSE(Admit(ctx_, user, 10, "/v1/completions", &first).has_value());
  ASSERT_FALSE(Admit(ctx_, user, 10, "/v1/completions", &second).has_value());
  auto refused = Admit(ctx_, user, 10, "/v1/completions", &third);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(ErrorType(*refused), "rate_limit_error");
  EXPECT_NE(refused->body.find("running or queued"), std::string::npos) << refused->body;
  // Another user is not affected, and a finished request frees its place.
  Admission theirs;
  EXPECT_FALSE(Admit(ctx_, other, 10, "/v1/completions", &theirs).has_value());
  first.Settle(5, 5, /*completed=*/true);
  EXPECT_FALSE(Admit(ctx_, user, 10, "/v1/completions", &third).has_value());
  // A dropped admission frees its place too, once, even after a move.
  Admission moved = std::move(second);
  moved = Admission();
  Admission fourth;
  EXPECT_FALSE(Admit(ctx_, user, 10, "/v1/completions", &fourth).has_value());
  Admission fifth;
  EXPECT_TRUE(Admit(ctx_, user, 10, "/v1/completions", &fifth).has_value());
}

TEST_F(AdmissionTest, ResizeTakesTheDifferenceOrRefusesUnchanged) {
  const accounts::User user = MakeUser("estimated", /*quota=*/500);
  Admission admission;
  ASSERT_FALSE(Admit(ctx_, user, 100, "/v1/ask", &admission).has_value());
  EXPECT_FALSE(admission.Resize(ctx_.metrics, 300).has_value());
  EXPECT_EQ(admission.budget(), 300);
  auto status = ctx_.accounts->quota().GetStatus(user);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->reserved, 300);
  // 600 does not fit in the quota of 500: refused, the 300 still held.
  auto refused = admission.Resize(ctx_.metrics, 600);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(ErrorType(*refused), "quota_exceeded");
  EXPECT_EQ(admission.budget(), 300);
  EXPECT_EQ(ctx_.accounts->quota().GetStatus(user)->reserved, 300);
  // Shrinking gives the rest back to the quota and the bucket.
  EXPECT_FALSE(admission.Resize(ctx_.metrics, 50).has_value());
  EXPECT_EQ(ctx_.accounts->quota().GetStatus(user)->reserved, 50);
  admission.Settle(20, 30, /*completed=*/true);
  EXPECT_EQ(ctx_.accounts->quota().GetStatus(user)->used, 50);
  // The bucket holds all but the 50 spent.
  EXPECT_FALSE(ctx_.accounts->rate_limiter().Admit(user.id, 951).ok());
  EXPECT_TRUE(ctx_.accounts->rate_limiter().Admit(user.id, 950).ok());
}

TEST_F(AdmissionTest, RequestRateLimitAloneTakesNoTokens) {
  const accounts::User user = MakeUser("tokenizer", /*quota=*/0);
  EXPECT_FALSE(AdmitRequest(ctx_, user).has_value());  // no quota needed
  EXPECT_TRUE(BucketIsFull(user));
}

TEST_F(AdmissionTest, ContextLengthRefusalNamesBothCounts) {
  HttpResponse r = ContextLengthRefusal(ctx_.metrics, "too long", 9000, 8192);
  EXPECT_EQ(r.status, 400);
  auto err = nlohmann::json::parse(r.body)["error"];
  EXPECT_EQ(err["type"], "exceed_context_size_error");
  EXPECT_EQ(err["n_prompt_tokens"], 9000);
  EXPECT_EQ(err["n_ctx"], 8192);
  EXPECT_NE(ctx_.metrics.Render().find("ragd_context_length_errors_total 1\n"), std::string::npos);
}

}  // namespace
}  // namespace ragd::app
