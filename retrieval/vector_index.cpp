#include "retrieval/vector_index.h"

#include <cblas.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/index_io.h>
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <queue>
#include <unordered_set>

#include "retrieval/int8_rows.h"

namespace ragd::retrieval {

using FaissId = faiss::Index::idx_t;

struct VectorIndex::Impl {
  std::unique_ptr<faiss::IndexIDMap2> map;
  // Flat kind only: the int8 copy of the flat vectors, row for row, that
  // Search scans (see int8_rows.h); empty for HNSW.
  Int8Rows int8;

  // Rebuilds `int8` from the flat vectors (after a load, or if a mutation
  // left it out of step).
  void Requantize(int dim) {
    int8 = Int8Rows(dim);
    if (const auto* flat = dynamic_cast<const faiss::IndexFlatIP*>(map->index); flat != nullptr) {
      int8.Append(flat->get_xb(), static_cast<size_t>(flat->ntotal));
    }
  }
};

namespace {

// An empty IDMap2 of the requested kind, owning its inner index.
std::unique_ptr<faiss::IndexIDMap2> NewMap(int dim, const VectorIndexOptions& o) {
  faiss::Index* inner = nullptr;
  if (o.kind == "hnsw") {
    auto* hnsw = new faiss::IndexHNSWFlat(dim, o.hnsw_m, faiss::METRIC_INNER_PRODUCT);
    hnsw->hnsw.efConstruction = o.hnsw_ef_construction;
    hnsw->hnsw.efSearch = o.hnsw_ef_search;
    inner = hnsw;
  } else {
    inner = new faiss::IndexFlatIP(dim);
  }
  auto map = std::make_unique<faiss::IndexIDMap2>(inner);
  map->own_fields = true;
  return map;
}

// FAISS parallelizes with OpenMP: over queries for a search (a single query
// gains nothing) and with per-node spin locks while building HNSW, which
// crawls when the cores are shared with other work (an order of magnitude
// slower on 2 busy cores, figures in bench/README.md). Every call therefore
// runs FAISS on the calling thread only; omp_set_num_threads affects only
// that thread.
void SerialOpenMp() { omp_set_num_threads(1); }

std::string KindOf(const faiss::Index* inner) {
  if (dynamic_cast<const faiss::IndexHNSWFlat*>(inner) != nullptr) return "hnsw";
  if (dynamic_cast<const faiss::IndexFlatIP*>(inner) != nullptr) return "flat";
  return "";
}

}  // namespace

void IdSummary::Add(int64_t id) {
  ++count;
  max_id = std::max(max_id, id);
  id_sum += static_cast<uint64_t>(id);
}

VectorIndex::VectorIndex(int dim, VectorIndexOptions options)
    : dim_(dim), options_(std::move(options)), impl_(std::make_unique<Impl>()) {}
VectorIndex::~VectorIndex() = default;

Result<std::unique_ptr<VectorIndex>> VectorIndex::Create(int dim, const VectorIndexOptions& options) {
  if (dim <= 0) return Status::InvalidArgument("vector dimension must be positive");
  if (options.kind != "flat" && options.kind != "hnsw") {
    return Status::InvalidArgument("unknown index kind \"" + options.kind + "\" (flat or hnsw)");
  }
  std::unique_ptr<VectorIndex> index(new VectorIndex(dim, options));
  try {
    index->impl_->map = NewMap(dim, options);
    index->impl_->int8 = Int8Rows(dim);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("faiss: ") + e.what());
  }
  return index;
}

Result<std::unique_ptr<VectorIndex>> VectorIndex::Load(const std::string& path,
                                                       const VectorIndexOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound("no vector index at " + path);
  std::unique_ptr<faiss::Index> raw;
  try {
    raw.reset(faiss::read_index(path.c_str()));
  } catch (const std::exception& e) {
    return Status::Corrupt(path + ": " + e.what());
  }
  auto* map = dynamic_cast<faiss::IndexIDMap2*>(raw.get());
  if (map == nullptr) return Status::Corrupt(path + " is not an ID-mapped index");
  const std::string kind = KindOf(map->index);
  if (kind.empty()) return Status::Corrupt(path + " holds an unsupported index type");
  if (kind != options.kind) return Status::InvalidArgument(path + " is a \"" + kind + "\" index");
  if (kind == "hnsw") static_cast<faiss::IndexHNSWFlat*>(map->index)->hnsw.efSearch = options.hnsw_ef_search;
  std::unique_ptr<VectorIndex> index(new VectorIndex(static_cast<int>(map->d), options));
  raw.release();
  index->impl_->map.reset(map);
  index->impl_->Requantize(index->dim_);
  return index;
}

namespace {

// fsync of a file or folder opened with `flags`.
Status SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + path + " to sync it: " + std::strerror(errno));
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return Status::IoError("cannot sync " + path + ": " + std::strerror(err));
  return Status::Ok();
}

}  // namespace

Status VectorIndex::Save(const std::string& path) const {
  std::shared_lock lock(mutex_);
  const std::string tmp = path + ".tmp";
  try {
    faiss::write_index(impl_->map.get(), tmp.c_str());
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot write " + tmp + ": " + e.what());
  }
  // The bytes reach the disk before the rename makes them the index, and
  // the rename itself before Save returns: after a power loss the file is
  // the old index or the new one, never a torn one.
  if (Status st = SyncPath(tmp, O_RDONLY); !st.ok()) {
    std::remove(tmp.c_str());
    return st;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + ": " + ec.message());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return SyncPath(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
}

Status VectorIndex::Add(std::span<const int64_t> ids, std::span<const float> vectors) {
  if (vectors.size() != ids.size() * static_cast<size_t>(dim_)) {
    return Status::InvalidArgument("vector data does not match ids x dimension");
  }
  if (ids.empty()) return Status::Ok();
  SerialOpenMp();
  std::unique_lock lock(mutex_);
  auto& map = *impl_->map;
  for (int64_t id : ids) {
    if (map.rev_map.count(id) != 0)
      return Status::InvalidArgument("id " + std::to_string(id) + " already indexed");
  }
  try {
    std::vector<FaissId> fids(ids.begin(), ids.end());
    map.add_with_ids(static_cast<FaissId>(ids.size()), vectors.data(), fids.data());
    if (options_.kind == "flat") impl_->int8.Append(vectors.data(), ids.size());
  } catch (const std::exception& e) {
    impl_->Requantize(dim_);
    return Status::Internal(std::string("faiss add: ") + e.what());
  }
  return Status::Ok();
}

Status VectorIndex::Remove(std::span<const int64_t> ids) {
  if (ids.empty()) return Status::Ok();
  SerialOpenMp();
  std::unique_lock lock(mutex_);
  try {
    if (options_.kind == "hnsw") return RebuildWithout(ids);
    std::vector<FaissId> fids(ids.begin(), ids.end());
    faiss::IDSelectorBatch selector(static_cast<size_t>(fids.size()), fids.data());
    // The flat index keeps the remaining vectors in order; so does the copy.
    std::vector<bool> keep(impl_->map->id_map.size());
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = !selector.is_member(impl_->map->id_map[i]);
    impl_->map->remove_ids(selector);
    impl_->int8.Compact(keep);
    if (impl_->int8.size() != static_cast<size_t>(impl_->map->ntotal)) impl_->Requantize(dim_);
  } catch (const std::exception& e) {
    impl_->Requantize(dim_);
    return Status::Internal(std::string("faiss remove: ") + e.what());
  }
  return Status::Ok();
}

Status VectorIndex::RebuildWithout(std::span<const int64_t> ids) {
  const std::unordered_set<int64_t> drop(ids.begin(), ids.end());
  auto& old = *impl_->map;
  std::vector<FaissId> keep_ids;
  std::vector<float> keep;
  for (FaissId id : old.id_map) {
    if (drop.count(id) != 0) continue;
    keep_ids.push_back(id);
    keep.resize(keep.size() + static_cast<size_t>(dim_));
    old.reconstruct(id, keep.data() + keep.size() - dim_);
  }
  if (keep_ids.size() == old.id_map.size()) return Status::Ok();
  auto fresh = NewMap(dim_, options_);
  if (!keep_ids.empty())
    fresh->add_with_ids(static_cast<FaissId>(keep_ids.size()), keep.data(), keep_ids.data());
  impl_->map = std::move(fresh);
  return Status::Ok();
}

Result<std::vector<VectorHit>> VectorIndex::Search(std::span<const float> query, int k) const {
  if (query.size() != static_cast<size_t>(dim_))
    return Status::InvalidArgument("query has the wrong dimension");
  SerialOpenMp();
  std::shared_lock lock(mutex_);
  auto& map = *impl_->map;
  k = std::min<int>(k, static_cast<int>(map.ntotal));
  std::vector<VectorHit> hits;
  if (k <= 0) return hits;
  std::vector<float> scores(static_cast<size_t>(k));
  std::vector<FaissId> labels(static_cast<size_t>(k));
  try {
    if (options_.kind == "hnsw") {
      // efSearch must be at least k for HNSW to return k results.
      faiss::SearchParametersHNSW params;
      params.efSearch = std::max(options_.hnsw_ef_search, k);
      map.index->search(1, query.data(), k, scores.data(), labels.data(), &params);
      for (auto& l : labels) {
        if (l >= 0) l = map.id_map[static_cast<size_t>(l)];
      }
    } else {
      const auto* flat = static_cast<const faiss::IndexFlatIP*>(map.index);
      FlatTopK(flat->get_xb(), static_cast<size_t>(map.ntotal), query, k, scores, labels);
      for (auto& l : labels) l = map.id_map[static_cast<size_t>(l)];
    }
  } catch (const std::exception& e) {
    return Status::Internal(std::string("faiss search: ") + e.what());
  }
  for (int i = 0; i < k; ++i) {
    if (labels[static_cast<size_t>(i)] >= 0)
      hits.push_back({labels[static_cast<size_t>(i)], scores[static_cast<size_t>(i)]});
  }
  return hits;
}

// Exact top-k of a flat index: scan the int8 copy (a quarter of the bytes of
// the floats), keep the k best lower bounds, rescore exactly every row whose
// upper bound reaches the k-th lower bound. Rows out of step with the copy
// (never expected) fall back to a float scan.
void VectorIndex::FlatTopK(const float* xb, size_t n, std::span<const float> query, int k,
                           std::vector<float>& scores, std::vector<FaissId>& rows) const {
  const Int8Rows& int8 = impl_->int8;
  std::vector<std::pair<float, uint32_t>> cand;  // exact score, row
  auto exact = [&](size_t i) {
    return cblas_sdot(dim_, xb + i * static_cast<size_t>(dim_), 1, query.data(), 1);
  };
  if (int8.size() == n) {
    std::vector<float> approx(n), bound(n);
    int8.Scores(query.data(), approx.data(), bound.data());
    std::priority_queue<float, std::vector<float>, std::greater<float>> lows;  // the k best lower bounds
    for (size_t i = 0; i < n; ++i) {
      const float low = approx[i] - bound[i];
      if (lows.size() < static_cast<size_t>(k)) {
        lows.push(low);
      } else if (low > lows.top()) {
        lows.pop();
        lows.push(low);
      }
    }
    const float floor = lows.top();
    for (size_t i = 0; i < n; ++i) {
      if (approx[i] + bound[i] >= floor) cand.emplace_back(exact(i), static_cast<uint32_t>(i));
    }
  } else {
    for (size_t i = 0; i < n; ++i) cand.emplace_back(exact(i), static_cast<uint32_t>(i));
  }
  const size_t keep = std::min(cand.size(), static_cast<size_t>(k));
  std::partial_sort(cand.begin(), cand.begin() + static_cast<ptrdiff_t>(keep), cand.end(),
                    [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  for (size_t i = 0; i < keep; ++i) {
    scores[i] = cand[i].first;
    rows[i] = cand[i].second;
  }
}

Result<std::vector<VectorHit>> VectorIndex::SearchAmong(std::span<const float> query,
                                                        std::span<const int64_t> candidates, int k) const {
  if (query.size() != static_cast<size_t>(dim_))
    return Status::InvalidArgument("query has the wrong dimension");
  std::shared_lock lock(mutex_);
  auto& map = *impl_->map;
  std::vector<VectorHit> hits;
  std::vector<float> v(static_cast<size_t>(dim_));
  try {
    for (int64_t id : candidates) {
      if (map.rev_map.count(id) == 0) continue;
      map.reconstruct(id, v.data());
      float dot = 0;
      for (int j = 0; j < dim_; ++j) dot += v[static_cast<size_t>(j)] * query[static_cast<size_t>(j)];
      hits.push_back({id, dot});
    }
  } catch (const std::exception& e) {
    return Status::Internal(std::string("faiss reconstruct: ") + e.what());
  }
  const size_t keep = std::min(hits.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(hits.begin(), hits.begin() + static_cast<ptrdiff_t>(keep), hits.end(),
                    [](const VectorHit& a, const VectorHit& b) { return a.score > b.score; });
  hits.resize(keep);
  return hits;
}

int64_t VectorIndex::size() const {
  std::shared_lock lock(mutex_);
  return impl_->map->ntotal;
}

IdSummary VectorIndex::Summary() const {
  std::shared_lock lock(mutex_);
  IdSummary s;
  for (FaissId id : impl_->map->id_map) s.Add(id);
  return s;
}

bool VectorIndex::Contains(int64_t id) const {
  std::shared_lock lock(mutex_);
  return impl_->map->rev_map.count(id) != 0;
}

std::vector<int64_t> VectorIndex::Ids() const {
  std::shared_lock lock(mutex_);
  return std::vector<int64_t>(impl_->map->id_map.begin(), impl_->map->id_map.end());
}

}  // namespace ragd::retrieval
