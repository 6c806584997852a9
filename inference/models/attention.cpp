#include "inference/models/attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "inference/kernels/f16_attention.h"
#include "inference/models/vec_ops.h"

namespace ragd::inference {
namespace {

// Query heads per work item: two share each key load (DotRowsF16Order and
// DotRows take them in pairs).
constexpr int kHeadsPerItem = 2;

}  // namespace

void Attend(const ModelConfig& config, int layer, int64_t window, std::span<const AttentionSeq> seqs,
            ThreadPool* pool) {
  const int64_t hd = config.head_dim;
  const int64_t group = config.n_head / config.n_head_kv;
  const int64_t kv_width = config.n_head_kv * hd;
  const int64_t q_width = config.n_head * hd;
  const bool llama_order = config.f16_attention && hd % 64 == 0;

  // Work items are (sequence, token, kv head, pair of query heads), numbered
  // through `first`: the query heads of one item share its key loads, and a
  // single decode row still gives every thread a share.
  const int64_t n_kv = config.n_head_kv;
  const int64_t chunks = (group + kHeadsPerItem - 1) / kHeadsPerItem;
  const int64_t per_token = n_kv * chunks;
  std::vector<int64_t> first(seqs.size() + 1, 0);
  for (size_t s = 0; s < seqs.size(); ++s) first[s + 1] = first[s] + seqs[s].n * per_token;

  auto work = [&](int64_t begin, int64_t end, int /*thread*/) {
    thread_local std::vector<float> scores;
    thread_local std::vector<const float*> keys, values;
    size_t s = std::upper_bound(first.begin(), first.end(), begin) - first.begin() - 1;
    for (int64_t item = begin; item < end; ++item) {
      while (item >= first[s + 1]) ++s;
      const AttentionSeq& seq = seqs[s];
      const int64_t local = item - first[s];
      const int64_t i = local / per_token;
      const int64_t kvh = local % per_token / chunks;
      const int64_t g0 = local % chunks * kHeadsPerItem;
      const int64_t pos = seq.p0 + i;
      const int64_t lo = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
      const int64_t n_keys = pos - lo + 1;
      const int64_t kv_off = kvh * hd;
      if (static_cast<int64_t>(keys.size()) < n_keys) {
        keys.resize(n_keys);
        values.resize(n_keys);
      }
      for (int64_t j = 0; j < n_keys; ++j) {
        const int64_t p = lo + j;
        keys[j] = p < seq.p0 ? seq.cache->k(layer, p) + kv_off : seq.k + (p - seq.p0) * kv_width + kv_off;
        values[j] = p < seq.p0 ? seq.cache->v(layer, p) + kv_off : seq.v + (p - seq.p0) * kv_width + kv_off;
      }
      const int nq = static_cast<int>(std::min<int64_t>(kHeadsPerItem, group - g0));
      const float* q[kHeadsPerItem];
      float* out[kHeadsPerItem];
      for (int g = 0; g < nq; ++g) {
        const int64_t h = kvh * group + g0 + g;
        q[g] = seq.q + i * q_width + h * hd;
        out[g] = seq.out + i * q_width + h * hd;
      }
      if (static_cast<int64_t>(scores.size()) < nq * n_keys) scores.resize(nq * n_keys);
      if (llama_order) {
        // llama.cpp's arithmetic with its F16 cache, summed in the order of
        // its one-query step for every row (row results do not depend on
        // the number of rows).
        DotRowsF16Order(q, nq, keys.data(), n_keys, hd, scores.data());
        for (int g = 0; g < nq; ++g) {
          SoftmaxF16Order(scores.data() + g * n_keys, n_keys, lo);
          RoundToHalf(scores.data() + g * n_keys, n_keys);
        }
        WeightedRowSumF16Order(scores.data(), nq, values.data(), n_keys, lo, hd, out);
        continue;
      }
      DotRows(q, nq, keys.data(), n_keys, hd, scores.data());
      for (int g = 0; g < nq; ++g) {
        Softmax(scores.data() + g * n_keys, n_keys);
        if (config.f16_attention) RoundToHalf(scores.data() + g * n_keys, n_keys);
      }
      WeightedRowSum(scores.data(), nq, values.data(), n_keys, hd, out);
    }
  };
  const int64_t total = first.back();
  if (pool != nullptr && total > 1) {
    // Later tokens see more keys: hand out small pieces to balance threads
    // (single items when there are few, e.g. a decode step of two sequences).
    pool->RunDynamic(total, total < 4 * pool->size() ? 1 : 2, work);
  } else {
    work(0, total, 0);
  }
}

void StoreKv(const ModelConfig& config, int layer, const AttentionSeq& seq, KvCache* cache) {
  const int64_t kv_width = config.n_head_kv * config.head_dim;
  const int64_t keep = std::min(seq.n, cache->slots(layer));
  for (int64_t i = seq.n - keep; i < seq.n; ++i) {
    std::memcpy(cache->k(layer, seq.p0 + i), seq.k + i * kv_width, kv_width * sizeof(float));
    std::memcpy(cache->v(layer, seq.p0 + i), seq.v + i * kv_width, kv_width * sizeof(float));
  }
}

}  // namespace ragd::inference
