#include "inference/models/attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "inference/kernels/f16_attention.h"
#include "inference/kernels/vec_ops.h"

namespace ragd::inference {
namespace {

// Query heads per work item: up to four share each load of a key and value
// row (the kernels take them four at a time). For Gemma 3 270M that is a
// whole kv group: each row of the cache is read once per query token.
constexpr int kHeadsPerItem = 4;

// A sequence's consecutive tokens read the same key and value rows: up to
// this many of them make a group, whose items run one after the other on one
// thread (or, in pieces, run by run of keys), so that the rows come in from
// memory once for the group (a decode step's draft tokens, a prompt chunk's
// neighbours) instead of once per token on whichever core takes it.
constexpr int64_t kTokensPerGroup = 8;

// When there are fewer groups than this many per thread (one sequence's
// step of up to 8 tokens has one per kv head), each group is cut in pieces so
// that every thread has a share: the scores by runs of keys, the weighted
// sums by runs of the value dimension (128 values where the head width
// allows: 256 bytes of each row, which stream in from memory faster than
// 64-value cuts). Two or three sequences run faster as whole groups than
// cut in pieces, hence one group per thread (figures in bench/README.md).
constexpr int64_t kGroupsPerThread = 1;
constexpr int64_t kKeysPerPiece = 128;
constexpr int64_t kDimsPerPiece = 128;

// One work item: a query token of one sequence, one kv head, and up to
// kHeadsPerItem of the query heads that share it.
struct Item {
  const AttentionSeq* seq = nullptr;
  int64_t i = 0;       // token within the sequence's step
  int64_t kv_off = 0;  // offset of its kv head within a K or V row
  int64_t lo = 0;      // first visible position
  int64_t n_keys = 0;  // visible positions lo .. lo + n_keys - 1
  int nq = 0;
  const float* q[kHeadsPerItem] = {};
  float* out[kHeadsPerItem] = {};
};

class Items {
 public:
  Items(const ModelConfig& config, int64_t window, std::span<const AttentionSeq> seqs)
      : config_(config), window_(window), seqs_(seqs) {
    group_ = config.n_head / config.n_head_kv;
    chunks_ = (group_ + kHeadsPerItem - 1) / kHeadsPerItem;
    per_token_ = config.n_head_kv * chunks_;
    first_.assign(seqs.size() + 1, 0);
    group_first_.assign(seqs.size() + 1, 0);
    for (size_t s = 0; s < seqs.size(); ++s) {
      first_[s + 1] = first_[s] + seqs[s].n * per_token_;
      const int64_t runs = (seqs[s].n + kTokensPerGroup - 1) / kTokensPerGroup;
      group_first_[s + 1] = group_first_[s] + runs * per_token_;
    }
  }
  int64_t size() const { return first_.back(); }
  int64_t groups() const { return group_first_.back(); }

  // The items of group g: tokens [t0, t0 + n) of one sequence with the same
  // kv head and query heads, items first, first + stride, ...
  struct Group {
    int64_t first = 0, n = 0, stride = 0;
    int64_t item(int64_t t) const { return first + t * stride; }  // of token t0 + t
  };
  Group GroupAt(int64_t g) const {
    const size_t s = std::upper_bound(group_first_.begin(), group_first_.end(), g) - group_first_.begin() - 1;
    const int64_t local = g - group_first_[s];
    const int64_t t0 = local / per_token_ * kTokensPerGroup;
    return {first_[s] + t0 * per_token_ + local % per_token_, std::min(kTokensPerGroup, seqs_[s].n - t0),
            per_token_};
  }

  Item Get(int64_t item) const {
    const size_t s = std::upper_bound(first_.begin(), first_.end(), item) - first_.begin() - 1;
    const AttentionSeq& seq = seqs_[s];
    const int64_t hd = config_.head_dim, q_width = config_.n_head * hd;
    const int64_t local = item - first_[s];
    const int64_t kvh = local % per_token_ / chunks_;
    const int64_t g0 = local % chunks_ * kHeadsPerItem;
    Item it;
    it.seq = &seq;
    it.i = local / per_token_;
    it.kv_off = kvh * hd;
    const int64_t pos = seq.p0 + it.i;
    it.lo = window_ > 0 ? std::max<int64_t>(0, pos - window_ + 1) : 0;
    it.n_keys = pos - it.lo + 1;
    it.nq = static_cast<int>(std::min<int64_t>(kHeadsPerItem, group_ - g0));
    for (int g = 0; g < it.nq; ++g) {
      const int64_t h = kvh * group_ + g0 + g;
      it.q[g] = seq.q + it.i * q_width + h * hd;
      it.out[g] = seq.out + it.i * q_width + h * hd;
    }
    return it;
  }

 private:
  const ModelConfig& config_;
  int64_t window_;
  std::span<const AttentionSeq> seqs_;
  int64_t group_ = 0, chunks_ = 0, per_token_ = 0;
  std::vector<int64_t> first_;        // first item of each sequence
  std::vector<int64_t> group_first_;  // first group of each sequence
};

// Whether the item streams its value rows in (StreamRowsF16) before its
// weighted sum: its group's first token does (the group's later tokens, on
// the same thread, find the rows cached). The sum walks rows 64 positions
// apart, which the prefetchers do not follow far, and a decode step's rows
// are cold: the weights and the other sequences' caches pass through the
// last-level cache between two steps. One sequential pass brings cold rows
// in sooner than the strided walk waits for them; on warm rows the extra
// pass costs a little, and a decode step's rows are seldom warm (figures in
// bench/README.md).
bool StreamsValues(const Item& it) { return it.i % kTokensPerGroup == 0; }

// Pointers to the K (or V) rows of positions it.lo + j0 .. it.lo + j1 - 1,
// `offset` values into the item's kv head: from the cache before the step's
// first position, from the step's own rows after it.
template <typename T>
void GatherRows(const Item& it, bool keys, int layer, int64_t kv_width, int64_t j0, int64_t j1,
                int64_t offset, std::vector<const T*>* rows) {
  const AttentionSeq& seq = *it.seq;
  rows->resize(j1 - j0);
  // Cached positions sit in consecutive slots of the layer's ring: one
  // division for the first, then a step and a wrap.
  const int64_t cached_end = std::clamp<int64_t>(seq.p0 - it.lo, j0, j1);
  if (j0 < cached_end) {
    const T* ring;
    if constexpr (sizeof(T) == sizeof(uint16_t)) {
      ring = keys ? seq.cache->k16(layer, 0) : seq.cache->v16(layer, 0);
    } else {
      ring = keys ? seq.cache->k(layer, 0) : seq.cache->v(layer, 0);
    }
    const int64_t slots = seq.cache->slots(layer);
    int64_t slot = (it.lo + j0) % slots;
    for (int64_t j = j0; j < cached_end; ++j) {
      (*rows)[j - j0] = ring + slot * kv_width + it.kv_off + offset;
      if (++slot == slots) slot = 0;
    }
  }
  const T* own;
  if constexpr (sizeof(T) == sizeof(uint16_t)) {
    own = keys ? seq.k16 : seq.v16;
  } else {
    own = keys ? seq.k : seq.v;
  }
  for (int64_t j = cached_end; j < j1; ++j)
    (*rows)[j - j0] = own + (it.lo + j - seq.p0) * kv_width + it.kv_off + offset;
}

// llama.cpp's softmax of each query row's scores (times the model's score
// scale, as its soft_max takes kq_scale), rounded to half.
void SoftmaxRows(const ModelConfig& config, const Item& it, float* scores) {
  for (int g = 0; g < it.nq; ++g) {
    if (config.score_scale != 1.f) ScaleF32(config.score_scale, scores + g * it.n_keys, it.n_keys);
    SoftmaxF16Order(scores + g * it.n_keys, it.n_keys, it.lo);
    RoundToHalf(scores + g * it.n_keys, it.n_keys);
  }
}

// An item whole, on one thread.
void AttendItem(const ModelConfig& config, int layer, const Item& it, bool llama_order) {
  const int64_t hd = config.head_dim, kv_width = config.n_head_kv * hd;
  const bool half = config.f16_attention;
  thread_local std::vector<float> scores, unpacked;
  thread_local std::vector<const float*> keys, values;
  thread_local std::vector<const uint16_t*> keys16, values16;
  scores.resize(it.nq * it.n_keys);
  if (half) {
    GatherRows(it, true, layer, kv_width, 0, it.n_keys, 0, &keys16);
    GatherRows(it, false, layer, kv_width, 0, it.n_keys, 0, &values16);
  } else {
    GatherRows(it, true, layer, kv_width, 0, it.n_keys, 0, &keys);
    GatherRows(it, false, layer, kv_width, 0, it.n_keys, 0, &values);
  }
  if (llama_order) {
    // llama.cpp's arithmetic with its F16 cache, summed in the order of its
    // one-query step for every row (row results do not depend on the number
    // of rows).
    DotRowsF16Order(it.q, it.nq, keys16.data(), it.n_keys, hd, scores.data());
    SoftmaxRows(config, it, scores.data());
    if (StreamsValues(it)) StreamRowsF16(values16.data(), it.n_keys, hd);
    WeightedRowSumF16Order(scores.data(), it.nq, values16.data(), it.n_keys, it.lo, hd, it.out);
    return;
  }
  if (half) {
    // Head widths the llama.cpp-order kernels do not take: the rows as floats
    // for the plain ones.
    unpacked.resize(2 * it.n_keys * hd);
    keys.resize(it.n_keys);
    values.resize(it.n_keys);
    for (int64_t j = 0; j < it.n_keys; ++j) {
      float* kf = unpacked.data() + j * hd;
      float* vf = unpacked.data() + (it.n_keys + j) * hd;
      HalfToFloatRow(keys16[j], hd, kf);
      HalfToFloatRow(values16[j], hd, vf);
      keys[j] = kf;
      values[j] = vf;
    }
  }
  DotRows(it.q, it.nq, keys.data(), it.n_keys, hd, scores.data());
  for (int g = 0; g < it.nq; ++g) {
    if (config.score_scale != 1.f) ScaleF32(config.score_scale, scores.data() + g * it.n_keys, it.n_keys);
    Softmax(scores.data() + g * it.n_keys, it.n_keys);
    if (half) RoundToHalf(scores.data() + g * it.n_keys, it.n_keys);
  }
  WeightedRowSum(scores.data(), it.nq, values.data(), it.n_keys, hd, it.out);
}

// Few groups, llama.cpp order: the scores of runs of kKeysPerPiece
// positions on the pool (each run for every token of its group that sees
// it), then per run of kDimsPerPiece output values the softmax (each piece of
// an item computes the same one) and the weighted sums of the group's tokens.
// Every value is summed exactly as AttendItem sums it.
void AttendInPieces(const ModelConfig& config, int layer, const Items& items, ThreadPool* pool) {
  const int64_t hd = config.head_dim, kv_width = config.n_head_kv * hd;
  std::vector<Item> all(items.size());
  std::vector<int64_t> score_at(all.size() + 1, 0);
  for (size_t k = 0; k < all.size(); ++k) {
    all[k] = items.Get(static_cast<int64_t>(k));
    score_at[k + 1] = score_at[k] + all[k].nq * all[k].n_keys;
  }
  // Group g's visible positions run from lo[g] (its first token's first key)
  // to its last token's own position.
  const int64_t n_groups = items.groups();
  std::vector<Items::Group> groups(n_groups);
  std::vector<int64_t> lo(n_groups), key_piece(n_groups + 1, 0);
  for (int64_t g = 0; g < n_groups; ++g) {
    groups[g] = items.GroupAt(g);
    const Item& first = all[groups[g].first];
    const Item& last = all[groups[g].item(groups[g].n - 1)];
    lo[g] = first.lo;
    const int64_t span = last.lo + last.n_keys - first.lo;
    key_piece[g + 1] = key_piece[g] + (span + kKeysPerPiece - 1) / kKeysPerPiece;
  }
  std::vector<float> scores(score_at.back());
  pool->RunDynamic(key_piece.back(), 1, [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<const uint16_t*> keys;
    thread_local std::vector<float> part;
    for (int64_t piece = begin; piece < end; ++piece) {
      const size_t g = std::upper_bound(key_piece.begin(), key_piece.end(), piece) - key_piece.begin() - 1;
      const int64_t p0 = lo[g] + (piece - key_piece[g]) * kKeysPerPiece;
      for (int64_t t = 0; t < groups[g].n; ++t) {
        const int64_t k = groups[g].item(t);
        const Item& it = all[k];
        const int64_t j0 = std::max<int64_t>(p0 - it.lo, 0);
        const int64_t j1 = std::min(it.n_keys, p0 + kKeysPerPiece - it.lo);
        if (j0 >= j1) continue;
        GatherRows(it, true, layer, kv_width, j0, j1, 0, &keys);
        part.resize(it.nq * (j1 - j0));
        DotRowsF16Order(it.q, it.nq, keys.data(), j1 - j0, hd, part.data());
        for (int q = 0; q < it.nq; ++q) {
          std::memcpy(scores.data() + score_at[k] + q * it.n_keys + j0, part.data() + q * (j1 - j0),
                      (j1 - j0) * sizeof(float));
        }
      }
    }
  });
  const int64_t dims = hd % kDimsPerPiece == 0 ? kDimsPerPiece : 64;  // llama order: hd % 64 == 0
  const int64_t dim_pieces = hd / dims;
  pool->RunDynamic(n_groups * dim_pieces, 1, [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<const uint16_t*> values;
    thread_local std::vector<float> w;
    for (int64_t piece = begin; piece < end; ++piece) {
      const Items::Group& group = groups[piece / dim_pieces];
      const int64_t d0 = piece % dim_pieces * dims;
      for (int64_t t = 0; t < group.n; ++t) {
        const int64_t k = group.item(t);
        const Item& it = all[k];
        w.assign(scores.begin() + score_at[k], scores.begin() + score_at[k + 1]);
        SoftmaxRows(config, it, w.data());
        GatherRows(it, false, layer, kv_width, 0, it.n_keys, d0, &values);
        if (StreamsValues(it)) StreamRowsF16(values.data(), it.n_keys, dims);
        float* out[kHeadsPerItem];
        for (int q = 0; q < it.nq; ++q) out[q] = it.out[q] + d0;
        WeightedRowSumF16Order(w.data(), it.nq, values.data(), it.n_keys, it.lo, dims, out);
      }
    }
  });
}

}  // namespace

void Attend(const ModelConfig& config, int layer, int64_t window, std::span<const AttentionSeq> seqs,
            ThreadPool* pool) {
  const bool llama_order = config.f16_attention && config.head_dim % 64 == 0;
  const Items items(config, window, seqs);
  const int64_t n_groups = items.groups();
  if (pool != nullptr && pool->size() > 1 && n_groups < kGroupsPerThread * pool->size()) {
    if (llama_order) {
      AttendInPieces(config, layer, items, pool);
    } else {  // the other kernels are not cut in pieces: the items spread over the threads
      pool->RunDynamic(items.size(), 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t item = begin; item < end; ++item) AttendItem(config, layer, items.Get(item), false);
      });
    }
    return;
  }
  auto work = [&](int64_t begin, int64_t end, int /*thread*/) {
    for (int64_t g = begin; g < end; ++g) {
      const Items::Group group = items.GroupAt(g);
      for (int64_t t = 0; t < group.n; ++t) AttendItem(config, layer, items.Get(group.item(t)), llama_order);
    }
  };
  if (pool != nullptr && items.size() > 1) {
    // Later tokens see more keys: hand out single groups to balance threads.
    pool->RunDynamic(n_groups, 1, work);
  } else {
    work(0, n_groups, 0);
  }
}

void StoreKv(const ModelConfig& config, int layer, const AttentionSeq& seq, KvCache* cache) {
  const int64_t kv_width = config.n_head_kv * config.head_dim;
  const int64_t keep = std::min(seq.n, cache->slots(layer));
  for (int64_t i = seq.n - keep; i < seq.n; ++i) {
    if (cache->half()) {
      std::memcpy(cache->k16(layer, seq.p0 + i), seq.k16 + i * kv_width, kv_width * sizeof(uint16_t));
      std::memcpy(cache->v16(layer, seq.p0 + i), seq.v16 + i * kv_width, kv_width * sizeof(uint16_t));
    } else {
      std::memcpy(cache->k(layer, seq.p0 + i), seq.k + i * kv_width, kv_width * sizeof(float));
      std::memcpy(cache->v(layer, seq.p0 + i), seq.v + i * kv_width, kv_width * sizeof(float));
    }
  }
}

}  // namespace ragd::inference
