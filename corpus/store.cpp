// Store::Open picks the engine; the checks both engines make before writing.
#include "corpus/store.h"

#include "corpus/store_common.h"

namespace ragd::corpus {

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (!options.postgres_url.empty()) return internal::OpenPostgresStore(options);
  return internal::OpenSqliteStore(options);
}

namespace internal {

std::string NormalizeSha256(std::string_view hex) {
  if (hex.size() != 64) return {};
  std::string out(hex);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  }
  return out;
}

Status ValidateChunks(std::string_view text, std::span<const NewChunk> chunks) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    const NewChunk& c = chunks[i];
    const auto size = static_cast<int64_t>(text.size());
    if (c.start < 0 || c.start > c.end || c.end > size) {
      return Status::InvalidArgument("chunk " + std::to_string(i) + " offsets [" + std::to_string(c.start) +
                                     ", " + std::to_string(c.end) + ") lie outside the document text");
    }
    if (text.substr(c.start, c.end - c.start) != c.text) {
      return Status::InvalidArgument("chunk " + std::to_string(i) +
                                     " text differs from its span of the document text");
    }
    if (c.token_count < 0)
      return Status::InvalidArgument("chunk " + std::to_string(i) + " has a negative token count");
  }
  return Status::Ok();
}

Status CheckChunkEmbedding(size_t i, const std::vector<float>& embedding, int& dim) {
  if (embedding.empty()) return Status::Ok();
  if (dim == 0) dim = static_cast<int>(embedding.size());
  if (static_cast<int>(embedding.size()) == dim) return Status::Ok();
  return Status::InvalidArgument("chunk " + std::to_string(i) + " has an embedding of size " +
                                 std::to_string(embedding.size()) + ", expected " + std::to_string(dim));
}

Result<size_t> ReplacementDim(std::span<const std::pair<ChunkId, std::vector<float>>> rows) {
  if (rows.empty()) return size_t{0};
  const size_t dim = rows[0].second.size();
  if (dim == 0) return Status::InvalidArgument("replacement embeddings must not be empty");
  for (const auto& [id, v] : rows) {
    if (v.size() != dim) return Status::InvalidArgument("replacement embeddings differ in size");
  }
  return dim;
}

Status NotFoundDocument(DocumentId id) {
  return Status::NotFound("no document with id " + std::to_string(id));
}

Status NotFoundChunk(ChunkId id) { return Status::NotFound("no chunk with id " + std::to_string(id)); }

}  // namespace internal
}  // namespace ragd::corpus
