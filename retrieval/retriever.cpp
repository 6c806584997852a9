#include "retrieval/retriever.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_set>

namespace ragd::retrieval {
namespace {

constexpr size_t kRebuildBatch = 4096;  // vectors added to the index at once

}  // namespace

Result<std::unique_ptr<VectorIndex>> LoadOrRebuildIndex(const corpus::Store& store, const std::string& path,
                                                        int dim, const VectorIndexOptions& options,
                                                        OpenReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  OpenReport local;
  auto finish = [&](std::unique_ptr<VectorIndex> index) -> Result<std::unique_ptr<VectorIndex>> {
    local.vectors = index->size();
    local.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (report != nullptr) *report = local;
    return index;
  };

  auto loaded = VectorIndex::Load(path, options);
  if (loaded.ok()) {
    if ((*loaded)->dim() != dim) {
      local.reason = "the saved index has dimension " + std::to_string((*loaded)->dim());
    } else {
      IdSummary stored;
      std::unordered_set<int64_t> stored_ids;
      RAGD_RETURN_IF_ERROR(store.ForEachEmbedding([&](const corpus::EmbeddingRow& row) {
        stored.Add(row.chunk_id);
        stored_ids.insert(row.chunk_id);
        return true;
      }));
      if (stored == (*loaded)->Summary()) return finish(std::move(*loaded));
      // Repair: drop what the store no longer has, add what the index lacks.
      VectorIndex& index = **loaded;
      std::vector<int64_t> extra;
      std::unordered_set<int64_t> indexed;
      for (int64_t id : index.Ids()) {
        indexed.insert(id);
        if (stored_ids.count(id) == 0) extra.push_back(id);
      }
      local.reason = "the saved index holds " + std::to_string(index.size()) + " vectors, the store " +
                     std::to_string(stored.count);
      RAGD_RETURN_IF_ERROR(index.Remove(extra));
      std::vector<int64_t> ids;
      std::vector<float> data;
      Status add_status;
      RAGD_RETURN_IF_ERROR(store.ForEachEmbedding([&](const corpus::EmbeddingRow& row) {
        if (indexed.count(row.chunk_id) != 0) return true;
        if (row.embedding.size() != static_cast<size_t>(dim)) {
          add_status = Status::InvalidArgument("a stored embedding has dimension " +
                                               std::to_string(row.embedding.size()));
          return false;
        }
        ids.push_back(row.chunk_id);
        data.insert(data.end(), row.embedding.begin(), row.embedding.end());
        return true;
      }));
      RAGD_RETURN_IF_ERROR(add_status);
      RAGD_RETURN_IF_ERROR(index.Add(ids, data));
      local.repaired = true;
      local.added = static_cast<int64_t>(ids.size());
      local.removed = static_cast<int64_t>(extra.size());
      RAGD_RETURN_IF_ERROR(index.Save(path));
      return finish(std::move(*loaded));
    }
  } else {
    local.reason = loaded.status().message();
  }

  // Rebuild from the stored embeddings.
  local.rebuilt = true;
  auto index = VectorIndex::Create(dim, options);
  if (!index.ok()) return index.status();
  std::vector<int64_t> ids;
  std::vector<float> data;
  Status add_status;
  auto flush = [&] {
    if (add_status.ok()) add_status = (*index)->Add(ids, data);
    ids.clear();
    data.clear();
  };
  Status st = store.ForEachEmbedding([&](const corpus::EmbeddingRow& row) {
    if (row.embedding.size() != static_cast<size_t>(dim)) {
      add_status = Status::InvalidArgument(
          "stored embeddings have dimension " + std::to_string(row.embedding.size()) + ", the model " +
          std::to_string(dim) + "; re-embed the corpus or use the original model");
      return false;
    }
    ids.push_back(row.chunk_id);
    data.insert(data.end(), row.embedding.begin(), row.embedding.end());
    if (ids.size() >= kRebuildBatch) flush();
    return add_status.ok();
  });
  RAGD_RETURN_IF_ERROR(st);
  flush();
  RAGD_RETURN_IF_ERROR(add_status);
  RAGD_RETURN_IF_ERROR((*index)->Save(path));
  return finish(std::move(*index));
}

Retriever::Retriever(RetrieverOptions options, std::shared_ptr<const Embedder> embedder,
                     std::unique_ptr<corpus::Store> store, std::unique_ptr<VectorIndex> index)
    : options_(std::move(options)),
      embedder_(std::move(embedder)),
      store_(std::move(store)),
      index_(std::move(index)),
      searcher_(embedder_.get(), store_.get(), index_.get()),
      last_save_(std::chrono::steady_clock::now()) {
  ingestor_ = std::make_unique<Ingestor>(embedder_.get(), store_.get(), index_.get(), options_.ingest,
                                         [this] { OnChange(); });
}

Retriever::~Retriever() {
  stop_ = true;
  if (follower_.joinable()) follower_.join();
  (void)SaveIndex();
}

std::string Retriever::index_path() const { return options_.data_dir + "/vectors.faiss"; }
std::string Retriever::database_path() const {
  return options_.postgres_url.empty() ? options_.data_dir + "/corpus.db" : "the PostgreSQL corpus";
}

Result<std::unique_ptr<Retriever>> Retriever::Open(const RetrieverOptions& options,
                                                   std::shared_ptr<const Embedder> embedder,
                                                   OpenReport* report) {
  if (embedder == nullptr) return Status::InvalidArgument("no embedding model");
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Status::IoError("cannot create " + options.data_dir + ": " + ec.message());
  corpus::StoreOptions so;
  so.path = options.data_dir + "/corpus.db";
  so.postgres_url = options.postgres_url;
  so.synchronous_full = options.synchronous_full;
  auto store = corpus::Store::Open(so);
  if (!store.ok()) return store.status();
  // Read before the index is checked against the store: what commits later
  // is followed (see the file comment).
  auto last_change = (*store)->LastChange();
  if (!last_change.ok()) return last_change.status();
  auto stored_dim = (*store)->EmbeddingDim();
  if (!stored_dim.ok()) return stored_dim.status();
  if (*stored_dim != 0 && *stored_dim != embedder->dimension()) {
    return Status::InvalidArgument((so.postgres_url.empty() ? so.path : "the PostgreSQL corpus") +
                                   " holds embeddings of dimension " + std::to_string(*stored_dim) +
                                   " but the model " + embedder->name() + " makes " +
                                   std::to_string(embedder->dimension()));
  }
  auto index = LoadOrRebuildIndex(**store, options.data_dir + "/vectors.faiss", embedder->dimension(),
                                  options.index, report);
  if (!index.ok()) return index.status();
  std::unique_ptr<Retriever> retriever(
      new Retriever(options, std::move(embedder), std::move(*store), std::move(*index)));
  retriever->followed_ = *last_change;
  if (!options.postgres_url.empty())
    retriever->follower_ = std::thread([r = retriever.get()] { r->FollowChanges(); });
  return retriever;
}

void Retriever::FollowChanges() {
  constexpr int kBatch = 4096;  // changes applied at once
  bool failing = false;         // report a failure once, not once per poll
  auto report = [&failing](const Status& status) {
    if (!failing) std::fprintf(stderr, "ragd: following the corpus: %s\n", status.ToString().c_str());
    failing = true;
  };
  while (!stop_) {
    // Waits in slices so that the destructor is not held up for long.
    const int wait_ms = std::min(options_.follow_poll_ms, 250);
    auto woke = store_->WaitForChange(wait_ms);
    // A notice or a timeout: read the sequence either way. A failure (the
    // database away) returns at once: wait here instead, not to spin, and
    // try again (the index catches up once the database is back).
    if (!woke.ok()) {
      report(woke.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    for (;;) {
      auto changes = store_->ChangesSince(followed_, kBatch);
      Result<std::pair<int64_t, int64_t>> applied =
          changes.ok() ? ingestor_->Follow(*changes) : Result<std::pair<int64_t, int64_t>>(changes.status());
      if (!applied.ok()) {
        report(applied.status());
        break;
      }
      failing = false;
      if (changes->empty()) break;
      followed_vectors_ += applied->first + applied->second;
      followed_ = changes->back().seq;
      if (changes->size() < static_cast<size_t>(kBatch) || stop_) break;
    }
  }
}

void Retriever::OnChange() {
  dirty_ = true;
  std::lock_guard<std::mutex> lock(save_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_save_ < std::chrono::seconds(options_.index_save_interval_s)) return;
  dirty_ = false;
  if (!index_->Save(index_path()).ok()) dirty_ = true;  // retried at the next change or SaveIndex()
  last_save_ = now;
}

Status Retriever::SaveIndex() {
  std::lock_guard<std::mutex> lock(save_mutex_);
  if (!dirty_.exchange(false)) return Status::Ok();
  Status st = index_->Save(index_path());
  if (!st.ok()) dirty_ = true;
  last_save_ = std::chrono::steady_clock::now();
  return st;
}

}  // namespace ragd::retrieval
