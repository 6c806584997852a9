#include "app/inference_service.h"

#include <chrono>

namespace ragd::app {

using Clock = std::chrono::steady_clock;

struct InferenceService::Job {
  std::unique_ptr<inference::Generation> generation;
  InferenceCallback callback;
  std::shared_ptr<InferenceTicket> ticket;
  Clock::time_point queued_at;
  double queue_ms = 0;
};

InferenceService::InferenceService(inference::Engine& engine, InferenceServiceOptions options)
    : engine_(engine), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

InferenceService::~InferenceService() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& job : queue_) job->ticket->Cancel();
  }
  cv_.notify_all();
  thread_.join();
}

Result<std::shared_ptr<InferenceTicket>> InferenceService::Submit(const inference::GenerationRequest& request,
                                                                  InferenceCallback callback) {
  auto generation = engine_.Start(request);
  if (!generation.ok()) return generation.status();
  auto job = std::make_unique<Job>();
  job->generation = std::move(generation).value();
  job->callback = std::move(callback);
  job->ticket = std::make_shared<InferenceTicket>();
  job->ticket->handle_ = job->generation->cancel_handle();
  job->queued_at = Clock::now();
  std::shared_ptr<InferenceTicket> ticket = job->ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("server is shutting down");
    if (queue_.size() >= static_cast<size_t>(options_.max_queue))
      return Status::Unavailable("too many requests waiting (" + std::to_string(queue_.size()) +
                                 "); retry shortly");
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return ticket;
}

size_t InferenceService::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

size_t InferenceService::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void InferenceService::Loop() {
  std::vector<std::unique_ptr<Job>> active;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !active.empty(); });
      if (stopping_) {
        for (auto& job : active) job->ticket->Cancel();
        for (auto& job : queue_) active.push_back(std::move(job));
        queue_.clear();
      }
      while (!queue_.empty() && active.size() < static_cast<size_t>(options_.max_running)) {
        auto job = std::move(queue_.front());
        queue_.pop_front();
        job->queue_ms = std::chrono::duration<double, std::milli>(Clock::now() - job->queued_at).count();
        active.push_back(std::move(job));
      }
      running_ = active.size();
    }
    // One token for every running generation, in arrival order.
    for (auto& job : active) {
      InferenceEvent ev;
      auto chunk = job->generation->Next();
      if (!chunk.ok()) {
        ev.kind = InferenceEvent::Kind::kError;
        ev.error = chunk.status();
        ev.stats = job->generation->stats();
        job->callback(ev);
        job.reset();
        continue;
      }
      if (chunk->has_value()) {
        ev.text = std::move((*chunk)->text);
        if (!job->callback(ev)) job->ticket->Cancel();
      }
      if (job->generation->done()) {
        InferenceEvent done;
        done.kind = InferenceEvent::Kind::kDone;
        done.finish_reason = job->generation->finish_reason();
        done.stats = job->generation->stats();
        done.queue_ms = job->queue_ms;
        job->callback(done);
        job.reset();
      }
    }
    std::erase_if(active, [](const std::unique_ptr<Job>& j) { return j == nullptr; });
    size_t kv = 0;
    for (const auto& job : active) kv += job->generation->kv_cache_bytes();
    kv_bytes_ = kv;
    std::lock_guard<std::mutex> lock(mu_);
    running_ = active.size();
    if (stopping_ && active.empty() && queue_.empty()) return;
  }
}

}  // namespace ragd::app
