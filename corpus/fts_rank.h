// Internal: BM25 ranking of chunks_fts rows without a per-row table lookup.
//
// FTS5's built-in bm25() reads each matching row's length with one query on
// the %_docsize shadow table; on OR queries over common terms that lookup is
// most of the cost (about 5x the rest). ragd_bm25(chunks_fts, w0, w1, ...)
// computes exactly the same score (k1 = 1.2, b = 0.75, FTS5's IDF with its
// 1e-6 floor, per-column weights, negated: lower is better) but takes row
// lengths from a RowSizeCache shared by the store's connections, falling
// back to FTS5 (and caching the answer) for rows it does not hold.
// ragd_bm25_tail(chunks_fts, first, w0, w1, ...) scores only the phrases
// numbered first and up (in MATCH expression order): with a MATCH of
// "(a OR b) AND (a OR b OR c)" and first = 2 it gives bm25 over a, b, c of
// exactly the rows holding a or b.
//
// The cache is sound because a chunk row never changes its text once
// inserted and chunk ids are never reused (AUTOINCREMENT): a row's length,
// once known, stays true for as long as the row exists.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "corpus/sqlite_db.h"

namespace ragd::corpus::internal {

// Token count of FTS rows by rowid. Thread-safe; Get and Put never block
// each other (one lock only for adding a block of 65536 slots).
class RowSizeCache {
 public:
  RowSizeCache();
  ~RowSizeCache();
  RowSizeCache(const RowSizeCache&) = delete;
  RowSizeCache& operator=(const RowSizeCache&) = delete;

  // The size stored for `rowid`, or -1.
  int32_t Get(int64_t rowid) const;
  // Stores `size` (>= 0) for `rowid`; ids outside [0, 2^31) are ignored.
  void Put(int64_t rowid, int32_t size);
  // Number of rowids held (for tests).
  int64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kBlockBits = 16;
  static constexpr int64_t kBlocks = int64_t{1} << (31 - kBlockBits);
  std::unique_ptr<std::atomic<std::atomic<int32_t>*>[]> blocks_;
  std::mutex grow_mu_;
  std::atomic<int64_t> count_{0};
};

// Registers ragd_bm25 and ragd_bm25_tail on `db`; `cache` must outlive the
// connection.
Status RegisterBm25(Db& db, RowSizeCache* cache);

// Creates the connection's temp.chunks_fts_terms (an fts5vocab 'row' table
// over chunks_fts: term, doc = rows holding it, cnt) before it turns
// query-only.
Status CreateTermTable(Db& db);

// Fraction of the chunks holding a term, looked up once per term through
// temp.chunks_fts_terms and then cached (staleness only shifts which terms
// count as common). Thread-safe.
class TermFrequencies {
 public:
  // -1 for a term that is not plain ASCII letters and digits (its FTS5
  // tokens are not known here).
  Result<double> Fraction(Db& db, const std::string& term, int64_t rows);

 private:
  static constexpr size_t kMaxTerms = 1 << 16;  // then the cache starts over
  std::mutex mu_;
  std::unordered_map<std::string, double> fraction_;
};

// Fills `cache` with the sizes of every row of the FTS5 table `fts_table`
// from its %_docsize shadow table.
Status LoadRowSizes(Db& db, const char* fts_table, RowSizeCache& cache);

}  // namespace ragd::corpus::internal
