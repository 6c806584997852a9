#include "retrieval/ingest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "corpus/sha256.h"
#include "retrieval/embedder.h"
#include "retrieval/vector_index.h"

namespace ragd::retrieval {
namespace {

// Chunks embedded between two looks at the cancel flag: a few forward passes.
constexpr size_t kEmbedBatch = 64;

bool Cancelled(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(); }

// The chunks' embeddings end to end, as VectorIndex::Add takes them.
std::vector<float> Flatten(const std::vector<corpus::NewChunk>& chunks, int dim) {
  std::vector<float> flat;
  flat.reserve(chunks.size() * static_cast<size_t>(dim));
  for (const auto& c : chunks) flat.insert(flat.end(), c.embedding.begin(), c.embedding.end());
  return flat;
}

}  // namespace

Result<IngestResult> Ingestor::IngestBytes(std::string_view bytes, std::string_view file_name,
                                           std::string_view media_type, std::string_view title,
                                           const std::atomic<bool>* cancel,
                                           const std::function<void(int64_t, int64_t)>& progress) {
  const std::string sha = corpus::Sha256Hex(bytes);
  auto existing = store_->FindDocumentBySha256(sha);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) {
    const corpus::DocumentInfo& d = **existing;
    return IngestResult{d.id, false, d.title, d.media_type, d.chunk_count, 0, d.byte_size};
  }

  auto doc =
      corpus::ExtractContained(bytes, file_name, media_type, options_.extract, options_.containment, cancel);
  if (!doc.ok()) return doc.status();
  if (Cancelled(cancel)) return Status::Cancelled("ingest cancelled");
  auto chunks = ChunkAndEmbed(doc->text, cancel, progress);
  if (!chunks.ok()) return chunks.status();
  if (Cancelled(cancel)) return Status::Cancelled("ingest cancelled");

  corpus::NewDocument nd;
  nd.title = title.empty() ? doc->title : std::string(title);
  nd.source_name = std::string(file_name);
  nd.media_type = doc->media_type;
  nd.byte_size = static_cast<int64_t>(bytes.size());
  nd.sha256 = sha;
  IngestResult result;
  result.title = nd.title;
  result.media_type = nd.media_type;
  result.byte_size = nd.byte_size;
  for (const corpus::NewChunk& c : *chunks) result.token_count += c.token_count;
  nd.chunks = std::move(chunks).value();
  nd.text = std::move(doc->text);

  std::lock_guard<std::mutex> lock(write_mutex_);
  auto added = store_->AddDocument(nd);
  if (!added.ok()) return added.status();
  result.document_id = added->id;
  result.inserted = added->inserted;
  if (!added->inserted) {  // a concurrent upload of the same bytes won
    auto info = store_->GetDocument(added->id);
    if (info.ok()) {
      result.title = info->title;
      result.chunk_count = info->chunk_count;
    }
    result.token_count = 0;
    return result;
  }
  result.chunk_count = static_cast<int64_t>(added->chunk_ids.size());
  const std::vector<float> flat = Flatten(nd.chunks, embedder_->dimension());
  // The store has committed: an index failure here is repaired by the rebuild
  // at the next open, so it is reported but the document stays.
  Status st = index_->Add(added->chunk_ids, flat);
  if (on_change_) on_change_();
  if (!st.ok()) return Status(st.code(), "document stored but not indexed until restart: " + st.message());
  return result;
}

Result<std::vector<corpus::NewChunk>> Ingestor::ChunkAndEmbed(
    const std::string& text, const std::atomic<bool>* cancel,
    const std::function<void(int64_t, int64_t)>& progress) const {
  auto counter = [this](std::string_view t) { return static_cast<int>(embedder_->CountTokens(t)); };
  auto chunks = corpus::ChunkText(text, counter, options_.chunking);
  if (!chunks.ok()) return chunks.status();
  if (chunks->empty()) return Status::InvalidArgument("the document has no text to index");
  if (Cancelled(cancel)) return Status::Cancelled("ingest cancelled");

  std::vector<std::string> inputs;
  inputs.reserve(chunks->size());
  for (const auto& c : *chunks) {
    if (options_.embed_heading_context && !c.heading_context.empty()) {
      inputs.push_back(c.heading_context + "\n\n" + c.text);
    } else {
      inputs.push_back(c.text);
    }
  }
  // In batches, so a cancelled upload of a long document stops within one.
  std::vector<corpus::NewChunk> out;
  out.reserve(chunks->size());
  const int64_t total = static_cast<int64_t>(inputs.size());
  if (progress) progress(0, total);
  for (size_t from = 0; from < inputs.size(); from += kEmbedBatch) {
    if (Cancelled(cancel)) return Status::Cancelled("ingest cancelled");
    const size_t to = std::min(inputs.size(), from + kEmbedBatch);
    auto batch = embedder_->Embed(std::vector<std::string>(std::make_move_iterator(inputs.begin() + from),
                                                           std::make_move_iterator(inputs.begin() + to)));
    if (!batch.ok()) return batch.status();
    for (size_t i = from; i < to; ++i) {
      corpus::TextChunk& c = (*chunks)[i];
      corpus::NewChunk n;
      n.start = static_cast<int64_t>(c.start);
      n.end = static_cast<int64_t>(c.end);
      n.token_count = c.token_count;
      n.heading_context = std::move(c.heading_context);
      n.text = std::move(c.text);
      n.embedding = std::move((*batch)[i - from]);
      out.push_back(std::move(n));
    }
    if (progress) progress(static_cast<int64_t>(to), total);
  }
  return out;
}

Result<IngestResult> Ingestor::Reindex(corpus::DocumentId id, const std::atomic<bool>* cancel,
                                       const std::function<void(int64_t, int64_t)>& progress) {
  auto info = store_->GetDocument(id);
  if (!info.ok()) return info.status();
  auto text = store_->GetDocumentText(id);
  if (!text.ok()) return text.status();
  auto chunks = ChunkAndEmbed(*text, cancel, progress);
  if (!chunks.ok()) return chunks.status();
  if (Cancelled(cancel)) return Status::Cancelled("re-index cancelled");

  IngestResult result{id, true,           info->title, info->media_type, static_cast<int64_t>(chunks->size()),
                      0,  info->byte_size};
  for (const corpus::NewChunk& c : *chunks) result.token_count += c.token_count;
  std::lock_guard<std::mutex> lock(write_mutex_);
  auto replaced = store_->ReplaceChunks(id, *chunks);  // kNotFound when deleted meanwhile
  if (!replaced.ok()) return replaced.status();
  // As for an upload: the store has committed, and the next open repairs an
  // index that missed this change.
  Status st = index_->Remove(replaced->removed);
  if (st.ok()) st = index_->Add(replaced->added, Flatten(*chunks, embedder_->dimension()));
  if (on_change_) on_change_();
  if (!st.ok())
    return Status(st.code(), "document re-chunked but not indexed until restart: " + st.message());
  return result;
}

Result<IngestResult> Ingestor::IngestFile(const std::string& path, const std::atomic<bool>* cancel) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::NotFound("cannot read " + path + ": " + ec.message());
  if (size > options_.extract.max_bytes) {
    return Status::OutOfRange(path + " is larger than the limit of " +
                              std::to_string(options_.extract.max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + path);
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) return Status::IoError("short read from " + path);
  return IngestBytes(bytes, std::filesystem::path(path).filename().string(), {}, {}, cancel);
}

Result<int64_t> Ingestor::Delete(corpus::DocumentId id) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  auto removed = store_->DeleteDocument(id);
  if (!removed.ok()) return removed.status();
  Status st = index_->Remove(*removed);
  if (on_change_) on_change_();
  RAGD_RETURN_IF_ERROR(st);
  return static_cast<int64_t>(removed->size());
}

Result<std::pair<int64_t, int64_t>> Ingestor::Follow(std::span<const corpus::Change> changes) {
  // The last change of each chunk decides; a re-embedded chunk leaves the
  // index first and comes back with its new vector.
  std::unordered_map<corpus::ChunkId, corpus::Change::Op> last;
  for (const corpus::Change& c : changes) last[c.chunk_id] = c.op;
  std::lock_guard<std::mutex> lock(write_mutex_);
  std::vector<int64_t> remove;
  std::vector<corpus::ChunkId> add;
  for (const auto& [id, op] : last) {
    const bool present = index_->Contains(id);
    if (op != corpus::Change::Op::kAdd && present) remove.push_back(id);
    if (op == corpus::Change::Op::kEmbed || (op == corpus::Change::Op::kAdd && !present)) add.push_back(id);
  }
  std::sort(add.begin(), add.end());
  auto chunks = store_->GetChunks(add, /*with_embeddings=*/true);
  if (!chunks.ok()) return chunks.status();
  std::vector<int64_t> ids;
  std::vector<float> flat;
  const size_t dim = static_cast<size_t>(embedder_->dimension());
  for (const corpus::ChunkRecord& c : *chunks) {
    if (c.embedding.size() != dim) continue;  // none, or of another model: not searchable by vector
    ids.push_back(c.id);
    flat.insert(flat.end(), c.embedding.begin(), c.embedding.end());
  }
  Status st = index_->Remove(remove);
  if (st.ok()) st = index_->Add(ids, flat);
  if ((!remove.empty() || !ids.empty()) && on_change_) on_change_();
  RAGD_RETURN_IF_ERROR(st);
  return std::make_pair(static_cast<int64_t>(ids.size()), static_cast<int64_t>(remove.size()));
}

}  // namespace ragd::retrieval
