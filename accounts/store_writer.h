// A thread of its own that runs posted writes to the store in the order
// posted, so that the thread that posts them (the inference thread settling
// an answer) never waits for the store. An optional `tick` runs on the same
// thread every `every`, whether the writer is idle or busy.
//
// Thread-safety: Post and Flush from any thread. The destructor runs what
// was posted, then stops.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ragd::accounts {

class StoreWriter {
 public:
  explicit StoreWriter(std::function<void()> tick = nullptr,
                       std::chrono::milliseconds every = std::chrono::milliseconds(0));
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  void Post(std::function<void()> task);
  // Returns once everything posted before the call has run (later posts do
  // not keep it waiting).
  void Flush();

 private:
  void Loop();

  std::function<void()> tick_;
  std::chrono::milliseconds every_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  uint64_t posted_ = 0;                      // guarded by mu_: tasks ever posted
  uint64_t done_ = 0;                        // guarded by mu_: tasks run, in order
  bool stopping_ = false;                    // guarded by mu_
  std::thread thread_;                       // last: starts once the rest is built
};

}  // namespace ragd::accounts
