#include "app/services/ingest_jobs.h"

#include <chrono>

namespace ragd::app {

const char* IngestStateName(IngestState state) {
  switch (state) {
    case IngestState::kQueued:
      return "queued";
    case IngestState::kRunning:
      return "running";
    case IngestState::kDone:
      return "done";
    case IngestState::kFailed:
      return "failed";
    case IngestState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

IngestJobs::IngestJobs(retrieval::Retriever* retriever, size_t max_waiting, size_t keep_finished)
    : retriever_(retriever),
      keep_finished_(keep_finished),
      capacity_(1 + max_waiting),
      monitor_([this] { Monitor(); }),
      // The bound is kept here (active_), where a job stops counting before
      // its client hears back; the pool's own would lag behind by a moment.
      pool_(std::make_unique<WorkPool>(1, max_waiting + 1)) {}

IngestJobs::~IngestJobs() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) {
      if (job->status.state == IngestState::kQueued) job->cancel = true;
    }
  }
  pool_.reset();  // runs what was accepted: cancelled jobs end at once
  wake_.notify_all();
  monitor_.join();
}

Result<int64_t> IngestJobs::Submit(IngestUpload upload, DoneCallback on_done,
                                   std::function<bool()> abandoned) {
  auto job = std::make_shared<Job>();
  job->on_done = std::move(on_done);
  job->abandoned = std::move(abandoned);
  job->status.file_name = upload.file_name;
  job->status.bytes = static_cast<int64_t>(upload.bytes.size());
  job->status.user_id = upload.user_id;
  job->status.reindex_document = upload.reindex_document;
  job->upload = std::move(upload);
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("the server is stopping");
    if (active_ >= capacity_)
      return Status::Unavailable("too many uploads are waiting for ingestion; try again later");
    ++active_;
    id = next_id_++;
    job->status.id = id;
    jobs_[id] = job;
  }
  if (!pool_->TryPost([this, job] { Run(job); })) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(id);
    --active_;
    return Status::Unavailable("too many uploads are waiting for ingestion; try again later");
  }
  wake_.notify_all();
  return id;
}

void IngestJobs::Run(const std::shared_ptr<Job>& job) {
  IngestJobStatus final_status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (job->cancel) {
      final_status = job->status;
      final_status.state = IngestState::kCancelled;
      final_status.error = Status::Cancelled("upload cancelled before ingestion started");
    } else {
      job->status.state = IngestState::kRunning;
    }
  }
  if (final_status.state == IngestState::kCancelled) return Finish(job, std::move(final_status));

  const auto t0 = std::chrono::steady_clock::now();
  const IngestUpload& up = job->upload;
  auto progress = [this, &job](int64_t done, int64_t total) {
    std::lock_guard<std::mutex> lock(mu_);
    job->status.chunks_done = done;
    job->status.chunks_total = total;
  };
  auto result = up.reindex_document > 0 ? retriever_->Reindex(up.reindex_document, &job->cancel, progress)
                                        : retriever_->Ingest(up.bytes, up.file_name, up.media_type, up.title,
                                                             &job->cancel, progress);
  {
    std::lock_guard<std::mutex> lock(mu_);
    final_status = job->status;
  }
  final_status.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (result.ok()) {
    final_status.state = IngestState::kDone;
    final_status.result = std::move(result).value();
  } else {
    final_status.state =
        result.status().code() == StatusCode::kCancelled ? IngestState::kCancelled : IngestState::kFailed;
    final_status.error = result.status();
  }
  Finish(job, std::move(final_status));
}

void IngestJobs::Finish(const std::shared_ptr<Job>& job, IngestJobStatus final_status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job->status = final_status;
    --active_;
    job->upload.bytes = std::string();  // the bytes are no longer needed; the record is
    job->abandoned = nullptr;
    finished_.push_back(final_status.id);
    while (finished_.size() > keep_finished_) {
      jobs_.erase(finished_.front());
      finished_.pop_front();
    }
  }
  if (job->on_done) job->on_done(final_status);
  job->on_done = nullptr;
}

std::optional<IngestJobStatus> IngestJobs::Get(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->status;
}

std::vector<IngestJobStatus> IngestJobs::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<IngestJobStatus> out;
  for (const auto& [id, job] : jobs_) out.push_back(job->status);
  return out;
}

Status IngestJobs::Cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no upload job " + std::to_string(id));
  const IngestState state = it->second->status.state;
  if (state != IngestState::kQueued && state != IngestState::kRunning)
    return Status::AlreadyExists("upload job " + std::to_string(id) + " has already finished (" +
                                 IngestStateName(state) + ")");
  it->second->cancel = true;
  return Status::Ok();
}

void IngestJobs::Monitor() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    bool active = false;
    for (auto& [id, job] : jobs_) {
      const IngestState state = job->status.state;
      if (state != IngestState::kQueued && state != IngestState::kRunning) continue;
      active = true;
      if (job->abandoned && !job->cancel && job->abandoned()) job->cancel = true;
    }
    if (stopping_ && !active) return;
    if (active)
      wake_.wait_for(lock, std::chrono::milliseconds(100));
    else
      wake_.wait(lock);
  }
}

}  // namespace ragd::app
