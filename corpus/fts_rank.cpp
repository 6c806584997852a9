#include "corpus/fts_rank.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

namespace ragd::corpus::internal {

RowSizeCache::RowSizeCache() : blocks_(new std::atomic<std::atomic<int32_t>*>[kBlocks]) {
  for (int64_t i = 0; i < kBlocks; ++i) blocks_[i].store(nullptr, std::memory_order_relaxed);
}

RowSizeCache::~RowSizeCache() {
  for (int64_t i = 0; i < kBlocks; ++i) delete[] blocks_[i].load(std::memory_order_relaxed);
}

int32_t RowSizeCache::Get(int64_t rowid) const {
  if (rowid < 0 || rowid >= (kBlocks << kBlockBits)) return -1;
  const std::atomic<int32_t>* block = blocks_[rowid >> kBlockBits].load(std::memory_order_acquire);
  if (block == nullptr) return -1;
  return block[rowid & ((1 << kBlockBits) - 1)].load(std::memory_order_relaxed);
}

void RowSizeCache::Put(int64_t rowid, int32_t size) {
  if (rowid < 0 || rowid >= (kBlocks << kBlockBits) || size < 0) return;
  std::atomic<std::atomic<int32_t>*>& slot = blocks_[rowid >> kBlockBits];
  std::atomic<int32_t>* block = slot.load(std::memory_order_acquire);
  if (block == nullptr) {
    std::lock_guard lock(grow_mu_);
    block = slot.load(std::memory_order_acquire);
    if (block == nullptr) {
      block = new (std::nothrow) std::atomic<int32_t>[size_t{1} << kBlockBits];
      if (block == nullptr) return;  // a cache: doing without is fine
      for (size_t i = 0; i < (size_t{1} << kBlockBits); ++i) block[i].store(-1, std::memory_order_relaxed);
      slot.store(block, std::memory_order_release);
    }
  }
  if (block[rowid & ((1 << kBlockBits) - 1)].exchange(size, std::memory_order_relaxed) < 0) {
    count_.fetch_add(1, std::memory_order_relaxed);
  }
}

namespace {

// Per-query values, computed on the first row (as FTS5's bm25 does).
struct QueryStats {
  double avg_row_size = 0;
  std::vector<double> idf;      // per phrase
  std::vector<double> freq;     // per phrase, scratch for the current row
  std::vector<double> weights;  // per column (the function's arguments)
};

int CountRow(const Fts5ExtensionApi*, Fts5Context*, void* user) {
  ++*static_cast<sqlite3_int64*>(user);
  return SQLITE_OK;
}

int ComputeStats(const Fts5ExtensionApi* api, Fts5Context* fts, int first, int n_args, sqlite3_value** args,
                 QueryStats& stats) {
  stats.weights.resize(static_cast<size_t>(api->xColumnCount(fts)), 1.0);
  for (int c = 0; c < n_args && static_cast<size_t>(c) < stats.weights.size(); ++c) {
    stats.weights[static_cast<size_t>(c)] = sqlite3_value_double(args[c]);
  }
  const int phrases = api->xPhraseCount(fts);
  sqlite3_int64 rows = 0, tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) return rc;
  stats.avg_row_size = rows > 0 ? static_cast<double>(tokens) / static_cast<double>(rows) : 1.0;
  stats.idf.assign(static_cast<size_t>(phrases), 0.0);
  stats.freq.assign(static_cast<size_t>(phrases), 0.0);
  for (int i = first; i < phrases; ++i) {
    sqlite3_int64 hits = 0;  // rows holding phrase i anywhere in the table
    rc = api->xQueryPhrase(fts, i, &hits, CountRow);
    if (rc != SQLITE_OK) return rc;
    const double idf = std::log((static_cast<double>(rows - hits) + 0.5) / (static_cast<double>(hits) + 0.5));
    stats.idf[static_cast<size_t>(i)] = idf <= 0.0 ? 1e-6 : idf;  // common terms keep a token weight
  }
  return SQLITE_OK;
}

// The score of the current row over phrases [first, phrase count), with the
// column weights in args.
void Score(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int first, int n_args,
           sqlite3_value** args) {
  constexpr double kK1 = 1.2, kB = 0.75;
  auto* cache = static_cast<RowSizeCache*>(api->xUserData(fts));
  auto* stats = static_cast<QueryStats*>(api->xGetAuxdata(fts, 0));
  if (stats == nullptr) {
    stats = new (std::nothrow) QueryStats;
    if (stats == nullptr) return sqlite3_result_error_nomem(ctx);
    int rc = SQLITE_OK;
    try {
      rc = ComputeStats(api, fts, first, n_args, args, *stats);
    } catch (const std::bad_alloc&) {
      rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) {
      rc = api->xSetAuxdata(fts, stats, [](void* p) { delete static_cast<QueryStats*>(p); });
    } else {
      delete stats;
    }
    if (rc != SQLITE_OK) return sqlite3_result_error_code(ctx, rc);
  }

  // Weighted term frequency of each phrase in this row: the sum over its
  // instances of the weight of the column holding it.
  int rc = SQLITE_OK;
  for (size_t p = static_cast<size_t>(first); p < stats->freq.size(); ++p) {
    Fts5PhraseIter it;
    int column = 0, offset = 0;
    double f = 0;
    rc = api->xPhraseFirst(fts, static_cast<int>(p), &it, &column, &offset);
    for (; rc == SQLITE_OK && column >= 0; api->xPhraseNext(fts, &it, &column, &offset)) {
      f += static_cast<size_t>(column) < stats->weights.size() ? stats->weights[static_cast<size_t>(column)]
                                                               : 1.0;
    }
    stats->freq[p] = f;
  }
  if (rc != SQLITE_OK) return sqlite3_result_error_code(ctx, rc);

  const sqlite3_int64 rowid = api->xRowid(fts);
  int size = cache->Get(rowid);
  if (size < 0) {
    rc = api->xColumnSize(fts, -1, &size);
    if (rc != SQLITE_OK) return sqlite3_result_error_code(ctx, rc);
    cache->Put(rowid, size);
  }
  const double norm = kK1 * (1.0 - kB + kB * static_cast<double>(size) / stats->avg_row_size);
  double score = 0;
  for (size_t i = static_cast<size_t>(first); i < stats->freq.size(); ++i) {
    const double f = stats->freq[i];
    if (f > 0) score += stats->idf[i] * (f * (kK1 + 1.0)) / (f + norm);
  }
  sqlite3_result_double(ctx, -score);
}

// ragd_bm25(table, weight_0, weight_1, ...)
void Bm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int n_args,
          sqlite3_value** args) {
  Score(api, fts, ctx, 0, n_args, args);
}

// ragd_bm25_tail(table, first_phrase, weight_0, weight_1, ...)
void Bm25Tail(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int n_args,
              sqlite3_value** args) {
  if (n_args < 1) return sqlite3_result_error(ctx, "ragd_bm25_tail: first phrase missing", -1);
  const int first = sqlite3_value_int(args[0]);
  if (first < 0 || first > api->xPhraseCount(fts)) {
    return sqlite3_result_error(ctx, "ragd_bm25_tail: first phrase out of range", -1);
  }
  Score(api, fts, ctx, first, n_args - 1, args + 1);
}

// Reads one SQLite varint (1 to 9 bytes, big-endian groups of 7 bits, the
// ninth byte whole) at `p`; returns its length or 0 when the blob ends first.
size_t ReadVarint(const uint8_t* p, const uint8_t* end, uint64_t& value) {
  value = 0;
  for (size_t i = 0; i < 9; ++i) {
    if (p + i >= end) return 0;
    if (i == 8) {
      value = (value << 8) | p[i];
      return 9;
    }
    value = (value << 7) | (p[i] & 0x7f);
    if ((p[i] & 0x80) == 0) return i + 1;
  }
  return 0;
}

}  // namespace

Status RegisterBm25(Db& db, RowSizeCache* cache) {
  // The fts5_api pointer is handed out through a bound pointer (SQLite's
  // documented way for FTS5 extensions).
  fts5_api* fts = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db.handle(), "SELECT fts5(?1)", -1, &stmt, nullptr) != SQLITE_OK) {
    return Status::Internal(std::string("sqlite: fts5 unavailable: ") + sqlite3_errmsg(db.handle()));
  }
  sqlite3_bind_pointer(stmt, 1, &fts, "fts5_api_ptr", nullptr);
  sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (fts == nullptr || fts->iVersion < 2) return Status::Internal("sqlite: no usable fts5_api");
  if (fts->xCreateFunction(fts, "ragd_bm25", cache, Bm25, nullptr) != SQLITE_OK ||
      fts->xCreateFunction(fts, "ragd_bm25_tail", cache, Bm25Tail, nullptr) != SQLITE_OK) {
    return Status::Internal("sqlite: cannot register ragd_bm25");
  }
  return Status::Ok();
}

Status LoadRowSizes(Db& db, const char* fts_table, RowSizeCache& cache) {
  // %_docsize(id INTEGER PRIMARY KEY, sz BLOB): sz holds one varint per
  // indexed column, the column's size in tokens. A row whose blob does not
  // parse is left out (ragd_bm25 then asks FTS5 for it).
  auto stmt = db.Prepare(std::string("SELECT id, sz FROM \"") + fts_table + "_docsize\"");
  if (!stmt.ok()) return stmt.status();
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    const auto blob = stmt->ColumnBlob(1);
    const uint8_t* p = blob.data();
    const uint8_t* end = p + blob.size();
    uint64_t total = 0;
    bool ok = !blob.empty();
    while (ok && p < end) {
      uint64_t v = 0;
      const size_t n = ReadVarint(p, end, v);
      ok = n > 0 && v < (uint64_t{1} << 30);
      p += n;
      total += v;
    }
    if (ok && total < (uint64_t{1} << 31)) cache.Put(stmt->ColumnInt(0), static_cast<int32_t>(total));
  }
}

}  // namespace ragd::corpus::internal

namespace ragd::corpus::internal {

Status CreateTermTable(Db& db) {
  return db.Exec(
      "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_terms USING fts5vocab(main, chunks_fts, 'row')");
}

Result<double> TermFrequencies::Fraction(Db& db, const std::string& term, int64_t rows) {
  for (char c : term) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return -1.0;
  }
  std::string key = term;
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // unicode61 folds ASCII case
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = fraction_.find(key); it != fraction_.end()) return it->second;
  }
  auto stmt = db.Prepare("SELECT doc FROM temp.chunks_fts_terms WHERE term = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, key);
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  const int64_t docs = *row ? stmt->ColumnInt(0) : 0;
  const double fraction = rows > 0 ? static_cast<double>(docs) / static_cast<double>(rows) : 0.0;
  std::lock_guard lock(mu_);
  if (fraction_.size() >= kMaxTerms) fraction_.clear();
  fraction_.emplace(std::move(key), fraction);
  return fraction;
}

}  // namespace ragd::corpus::internal
