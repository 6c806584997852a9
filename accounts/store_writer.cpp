#include "accounts/store_writer.h"

#include <utility>

namespace ragd::accounts {

StoreWriter::StoreWriter(std::function<void()> tick, std::chrono::milliseconds every)
    : tick_(std::move(tick)), every_(every), thread_([this] { Loop(); }) {}

StoreWriter::~StoreWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StoreWriter::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    ++posted_;
  }
  cv_.notify_all();
}

void StoreWriter::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = posted_;
  cv_.wait(lock, [&] { return done_ >= target; });
}

void StoreWriter::Loop() {
  // Ticks go by the wall clock: a writer that is always busy still ticks.
  const bool ticking = tick_ && every_.count() > 0;
  auto next_tick = std::chrono::steady_clock::now() + (ticking ? every_ : std::chrono::hours(24));
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_until(lock, next_tick, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty() && stopping_) return;  // everything posted has run
      if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
    }
    if (task) {
      task();
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++done_;
      }
      cv_.notify_all();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_tick) {
      if (ticking) tick_();
      next_tick = now + (ticking ? every_ : std::chrono::hours(24));
    }
  }
}

}  // namespace ragd::accounts
