// What answers a generation request, seen from the caller: the local
// batching scheduler (scheduler.h), or something outside the process that
// keeps the same contract (an upstream pool of OpenAI-compatible servers, in
// app/upstream/). Callers submit token ids and receive SchedulerEvents; they
// do not know which one answers.
//
// The contract, for every implementation:
// - Submit() validates and queues; an error return means nothing will be
//   called back and nothing was spent.
// - An accepted request gets kToken events (text deltas, in order) and then
//   exactly one kDone or kError, whose stats count what was generated for it:
//   the tokens the client was sent, never tokens it was not.
// - A callback returning false, or the returned CancelHandle, cancels that
//   request only; it still gets its final event (kDone, kCancelled).
//
// Thread-safety: every method from any thread; callbacks run on the
// implementation's threads and must be quick.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"
#include "inference/engine.h"
#include "inference/scheduler.h"

namespace ragd::inference {

class Generator {
 public:
  virtual ~Generator() = default;

  virtual Result<CancelHandle> Submit(const GenerationRequest& request, SchedulerCallback callback) = 0;

  // Requests accepted but not yet generating (queued for a batch slot or an
  // endpoint): the signal routing uses to pick a less busy model.
  virtual size_t waiting() const = 0;

  // Ok when a request submitted now can be answered; kUnavailable with the
  // reason when not (every endpoint of a pool unreachable).
  virtual Status Health() const = 0;
};

// The local batching loop as a Generator. Does not own the scheduler.
class LocalGenerator final : public Generator {
 public:
  explicit LocalGenerator(Scheduler& scheduler) : scheduler_(scheduler) {}

  Result<CancelHandle> Submit(const GenerationRequest& request, SchedulerCallback callback) override {
    return scheduler_.Submit(request, std::move(callback));
  }
  size_t waiting() const override { return scheduler_.gauges().waiting; }
  Status Health() const override { return Status::Ok(); }

 private:
  Scheduler& scheduler_;
};

}  // namespace ragd::inference
