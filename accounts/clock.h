// Wall-clock time for accounts: sessions, quota periods, rate limits.
//
// Everything in accounts/ reads time through a Clock so tests can move it.
// Times are Unix milliseconds (UTC). Implementations are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace ragd::accounts {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch, UTC.
  virtual int64_t NowMillis() const = 0;
  int64_t NowSeconds() const { return NowMillis() / 1000; }
};

// The system clock (std::chrono::system_clock). A static object; never deleted.
const Clock& SystemClock();

// A clock that only moves when told; for tests. Thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t start_millis = 0) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  void SetMillis(int64_t millis) { now_.store(millis); }
  void AdvanceMillis(int64_t millis) { now_.fetch_add(millis); }
  void AdvanceSeconds(int64_t seconds) { now_.fetch_add(seconds * 1000); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace ragd::accounts
