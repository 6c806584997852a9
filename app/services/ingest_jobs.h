// Uploads on their way into the corpus: a bounded queue in front of one
// ingestion thread, and a record per upload (a job) that can be read and
// cancelled while it waits or runs. Re-indexing a stored document is a job
// of the same queue (it embeds as much as an upload of it).
//
// Bounded: an upload is accepted only while fewer than `max_waiting` others
// wait; past that Submit answers kUnavailable at once (the route turns it
// into 503 with Retry-After) instead of holding the bytes of every upload in
// memory. One thread ingests: embedding already uses every core, and the
// extraction of each upload runs in its own child process under limits
// (corpus/extract_process.h).
//
// Cancelled: Cancel(id), or the job's `abandoned` predicate turning true (an
// HTTP client that left), stops a waiting job before it starts and a running
// one at its next check: the extraction child is killed, embedding stops
// between batches, nothing is written. A monitor thread polls the
// predicates every 100 ms while jobs are active.
//
// Finished jobs are remembered (the last `keep_finished`) so a client that
// asked for an asynchronous upload can read the outcome.
//
// Thread-safety: every method from any thread. The destructor cancels the
// jobs that wait, lets the running one finish, and joins.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/http/work_pool.h"
#include "common/status.h"
#include "retrieval/retriever.h"

namespace ragd::app {

struct IngestUpload {
  std::string bytes;  // owned: ingestion runs after the request is gone
  std::string file_name;
  std::string media_type;  // as declared; may be empty
  std::string title;       // replaces the extracted title when not empty
  int64_t user_id = 0;     // who uploaded
  // > 0: no upload but a re-index of this stored document (Retriever::Reindex);
  // `bytes` is empty and `file_name` names the document for the job list.
  int64_t reindex_document = 0;
};

enum class IngestState { kQueued, kRunning, kDone, kFailed, kCancelled };
const char* IngestStateName(IngestState state);

// What a job looks like at one moment.
struct IngestJobStatus {
  int64_t id = 0;
  IngestState state = IngestState::kQueued;
  std::string file_name;
  int64_t bytes = 0;
  int64_t user_id = 0;
  int64_t reindex_document = 0;                   // > 0: a re-index of this document, not an upload
  int64_t chunks_done = 0;                        // chunks embedded so far
  int64_t chunks_total = 0;                       // 0 until the text is chunked
  double seconds = 0;                             // time spent running (so far, or in all)
  Status error;                                   // kFailed, kCancelled: why
  std::optional<retrieval::IngestResult> result;  // kDone
};

class IngestJobs {
 public:
  using DoneCallback = std::function<void(const IngestJobStatus&)>;

  // `retriever` is not owned and must outlive this object.
  IngestJobs(retrieval::Retriever* retriever, size_t max_waiting, size_t keep_finished = 200);
  ~IngestJobs();
  IngestJobs(const IngestJobs&) = delete;
  IngestJobs& operator=(const IngestJobs&) = delete;

  // Queues the upload; its id, or kUnavailable when the queue is full.
  // `on_done` (may be empty) runs once on the ingestion thread with the final
  // status. `abandoned` (may be empty) is polled; true cancels the job.
  Result<int64_t> Submit(IngestUpload upload, DoneCallback on_done, std::function<bool()> abandoned = {});

  std::optional<IngestJobStatus> Get(int64_t id) const;
  std::vector<IngestJobStatus> List() const;  // oldest first
  // Asks a waiting or running job to stop. kNotFound when unknown,
  // kAlreadyExists when it has already finished.
  Status Cancel(int64_t id);

 private:
  struct Job {
    IngestUpload upload;
    DoneCallback on_done;
    std::function<bool()> abandoned;
    std::atomic<bool> cancel{false};
    IngestJobStatus status;  // GUARDED_BY(mu_)
  };

  void Run(const std::shared_ptr<Job>& job);
  void Finish(const std::shared_ptr<Job>& job, IngestJobStatus final_status);
  void Monitor();

  retrieval::Retriever* retriever_;
  const size_t keep_finished_;
  const size_t capacity_;  // jobs queued or running at most
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_;  // GUARDED_BY(mu_): active and remembered
  std::deque<int64_t> finished_;                  // GUARDED_BY(mu_): oldest first
  int64_t next_id_ = 1;                           // GUARDED_BY(mu_)
  size_t active_ = 0;                             // GUARDED_BY(mu_): queued or running
  bool stopping_ = false;                         // GUARDED_BY(mu_)
  std::thread monitor_;
  std::unique_ptr<WorkPool> pool_;  // last: destroyed (joined) first
};

}  // namespace ragd::app
