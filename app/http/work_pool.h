// A fixed set of threads running short CPU- or memory-heavy tasks (password
// hashing) with a bounded backlog, so an HTTP reactor thread hands the work
// over and returns at once, and a flood of such requests is refused rather
// than queued without end.
// Thread-safety: TryPost() from any thread. The destructor finishes what was
// accepted, then joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ragd::app {

class WorkPool {
 public:
  // `threads` >= 1 workers; at most `max_waiting` accepted tasks wait for one.
  WorkPool(size_t threads, size_t max_waiting) : capacity_(threads + max_waiting) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~WorkPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Accepts `task` unless every worker is busy and the backlog is full; false
  // then (the caller answers 503), and `task` is not run.
  bool TryPost(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || in_flight_ >= capacity_) return false;
      ++in_flight_;
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
    return true;
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
  }

  const size_t capacity_;  // running + waiting tasks at most
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // GUARDED_BY(mu_)
  size_t in_flight_ = 0;                     // GUARDED_BY(mu_): accepted and not finished
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace ragd::app
