// Sign-in backoff: after a few failed sign-ins, an account name or a client
// address must wait before it may try again, and each further failure doubles
// the wait up to a bound. Both keys are counted, so one address cannot guess
// many accounts' passwords and many addresses cannot guess one account's.
//
// The shape follows what large sign-in services do (and OWASP's
// authentication guidance): a small number of free attempts, then an
// exponential, bounded delay answered at once (never by sleeping on a request
// thread), with the count forgotten after a quiet spell. A success clears the
// account's count but not the address's, so an attacker holding one account
// cannot reset the address count between guesses at others.
//
// Memory is bounded: at most `max_entries` keys are tracked; past that the
// entry whose last failure is oldest is forgotten first.
//
// Thread-safety: LoginThrottle is safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "accounts/clock.h"

namespace ragd::accounts {

struct LoginThrottleOptions {
  int64_t account_free_failures = 5;   // failures per account name; the last of them starts the first wait
  int64_t address_free_failures = 20;  // failures per client address; likewise
  int64_t base_delay_s = 1;            // the first wait; doubled by every further failure
  int64_t max_delay_s = 300;           // the longest wait
  int64_t forget_after_s = 900;        // a key with no failure for this long starts afresh
  size_t max_entries = 100000;         // keys tracked at most
};

class LoginThrottle {
 public:
  // `clock` must outlive the throttle.
  LoginThrottle(const Clock* clock, LoginThrottleOptions options);

  // Seconds the caller must wait before trying `account` from `address`
  // (0 = may try now). Account names compare ignoring ASCII case, as
  // sign-in does.
  int64_t RetryAfter(std::string_view account, std::string_view address);
  // Counts one failed sign-in against both keys.
  void RecordFailure(std::string_view account, std::string_view address);
  // Clears the account's count after a successful sign-in.
  void RecordSuccess(std::string_view account);

  const LoginThrottleOptions& options() const { return options_; }

 private:
  struct Entry {
    int64_t failures = 0;
    int64_t last_failure_ms = 0;
    int64_t locked_until_ms = 0;
  };
  int64_t WaitMillis(const std::string& key, int64_t now_ms);                // requires mu_
  void Fail(const std::string& key, int64_t free_failures, int64_t now_ms);  // requires mu_
  void EvictOne();                                                           // requires mu_

  const Clock* clock_;
  LoginThrottleOptions options_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mu_); "a:<name>" and "i:<address>"
};

}  // namespace ragd::accounts
