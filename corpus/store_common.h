// Internal: what the two Store engines share (checks of what a caller
// hands in, error texts) and their factories. Not part of the public API.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "corpus/store.h"

namespace ragd::corpus::internal {

// Store on SQLite (store_sqlite.cpp) and on PostgreSQL (store_postgres.cpp).
Result<std::unique_ptr<Store>> OpenSqliteStore(const StoreOptions& options);
Result<std::unique_ptr<Store>> OpenPostgresStore(const StoreOptions& options);

// A 64-char hex digest in lowercase; "" when it is not one.
std::string NormalizeSha256(std::string_view hex);

// kInvalidArgument unless every chunk's offsets lie inside `text`, its text
// is that span and its token count is not negative.
Status ValidateChunks(std::string_view text, std::span<const NewChunk> chunks);

// Checks the size of chunk i's embedding against the store's `dim` (0: none
// stored yet: the first embedding sets it). Empty embeddings always pass.
Status CheckChunkEmbedding(size_t i, const std::vector<float>& embedding, int& dim);

// The size shared by replacement embeddings; kInvalidArgument when they are
// empty or differ. 0 for no rows.
Result<size_t> ReplacementDim(std::span<const std::pair<ChunkId, std::vector<float>>> rows);

Status NotFoundDocument(DocumentId id);
Status NotFoundChunk(ChunkId id);

}  // namespace ragd::corpus::internal
