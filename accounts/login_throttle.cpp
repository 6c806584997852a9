#include "accounts/login_throttle.h"

#include <algorithm>

#include "common/text.h"

namespace ragd::accounts {
namespace {

std::string AccountKey(std::string_view account) { return "a:" + AsciiLower(account); }
std::string AddressKey(std::string_view address) { return "i:" + std::string(address); }

}  // namespace

LoginThrottle::LoginThrottle(const Clock* clock, LoginThrottleOptions options)
    : clock_(clock), options_(options) {}

int64_t LoginThrottle::WaitMillis(const std::string& key, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return 0;
  if (now_ms - it->second.last_failure_ms >= options_.forget_after_s * 1000) {
    entries_.erase(it);
    return 0;
  }
  return std::max<int64_t>(0, it->second.locked_until_ms - now_ms);
}

int64_t LoginThrottle::RetryAfter(std::string_view account, std::string_view address) {
  const int64_t now = clock_->NowMillis();
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t wait = std::max(WaitMillis(AccountKey(account), now), WaitMillis(AddressKey(address), now));
  return (wait + 999) / 1000;
}

void LoginThrottle::Fail(const std::string& key, int64_t free_failures, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= options_.max_entries) EvictOne();
    it = entries_.emplace(key, Entry{}).first;
  } else if (now_ms - it->second.last_failure_ms >= options_.forget_after_s * 1000) {
    it->second = Entry{};
  }
  Entry& e = it->second;
  e.failures++;
  e.last_failure_ms = now_ms;
  if (e.failures < free_failures) return;
  // base * 2^(failures past the free ones), capped; the shift is capped first so it cannot overflow.
  const int64_t over = e.failures - free_failures;
  const int64_t delay_s =
      std::min(options_.max_delay_s, options_.base_delay_s << std::min<int64_t>(over, 30));
  e.locked_until_ms = now_ms + delay_s * 1000;
}

void LoginThrottle::EvictOne() {
  auto oldest = entries_.begin();
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->second.last_failure_ms < oldest->second.last_failure_ms) oldest = it;
  if (oldest != entries_.end()) entries_.erase(oldest);
}

void LoginThrottle::RecordFailure(std::string_view account, std::string_view address) {
  const int64_t now = clock_->NowMillis();
  std::lock_guard<std::mutex> lock(mu_);
  Fail(AccountKey(account), options_.account_free_failures, now);
  Fail(AddressKey(address), options_.address_free_failures, now);
}

void LoginThrottle::RecordSuccess(std::string_view account) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(AccountKey(account));
}

}  // namespace ragd::accounts
