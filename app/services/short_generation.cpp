#include "app/services/short_generation.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

namespace ragd::app {

inference::GenerationRequest OneLineRequest(std::vector<inference::TokenId> prompt, int max_tokens) {
  inference::GenerationRequest request;
  request.prompt = std::move(prompt);
  request.sampling.temperature = 0;
  request.max_tokens = max_tokens;
  request.stop = {"\n"};
  return request;
}

Result<ShortReply> RunShortGeneration(inference::Generator& generator,
                                      const inference::GenerationRequest& request,
                                      std::chrono::milliseconds timeout, const char* what) {
  // Shared with the generator's callback, which may outlive this call when
  // it gives up waiting.
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    ShortReply reply;   // guarded by mu
    bool first = true;  // guarded by mu: no token yet
    Status error;       // guarded by mu
    bool done = false;  // guarded by mu
  };
  auto shared = std::make_shared<Shared>();
  auto handle = generator.Submit(request, [shared](const inference::SchedulerEvent& e) {
    std::lock_guard<std::mutex> lock(shared->mu);
    if (e.kind == inference::SchedulerEvent::Kind::kToken) {
      shared->reply.text += e.text;
      if (shared->first) shared->reply.first_top_logprobs = e.top_logprobs;
      shared->first = false;
      return true;
    }
    if (e.kind == inference::SchedulerEvent::Kind::kError) shared->error = e.error;
    shared->reply.stats = e.stats;
    shared->reply.finish_reason = e.finish_reason;
    shared->done = true;
    shared->cv.notify_all();
    return false;
  });
  if (!handle.ok()) return handle.status();
  std::unique_lock<std::mutex> lock(shared->mu);
  if (!shared->cv.wait_for(lock, timeout, [&] { return shared->done; })) {
    handle->Cancel();
    return Status::Unavailable(std::string(what) + " took longer than " + std::to_string(timeout.count()) +
                               " ms");
  }
  if (!shared->error.ok()) return shared->error;
  return shared->reply;
}

Result<ShortReply> RunShortGeneration(inference::Engine& engine,
                                      const inference::GenerationRequest& request) {
  auto generation = engine.Start(request);
  if (!generation.ok()) return generation.status();
  ShortReply reply;
  for (bool first = true;; first = false) {
    auto chunk = (*generation)->Next();
    if (!chunk.ok()) return chunk.status();
    if (!*chunk) break;
    reply.text += (*chunk)->text;
    if (first) reply.first_top_logprobs = (*chunk)->top_logprobs;
  }
  return reply;
}

}  // namespace ragd::app
