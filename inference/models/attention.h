// Causal softmax attention of new tokens against one sequence's KV cache plus
// the keys/values computed for those same tokens in this step. Shared by the
// decoder architectures.
#pragma once

#include <cstdint>
#include <span>

#include "inference/kernels/kernels.h"
#include "inference/models/model.h"

namespace ragd::inference {

// One sequence's new tokens at positions p0 .. p0+n-1. Keys at positions < p0
// come from `cache` (which must still hold them: for a sliding layer the last
// `window` positions), keys at positions >= p0 from `k`/`v`. Query rows are
// already normalized, rotated and scaled.
struct AttentionSeq {
  const KvCache* cache = nullptr;
  int64_t p0 = 0;
  int64_t n = 0;
  const float* q = nullptr;  // n rows of n_head * head_dim
  // This step's keys and values, n rows of n_head_kv * head_dim each, in the
  // cache's kind (KvCache): floats in k/v, or halves in k16/v16.
  const float* k = nullptr;
  const float* v = nullptr;
  const uint16_t* k16 = nullptr;
  const uint16_t* v16 = nullptr;
  float* out = nullptr;  // n rows of n_head * head_dim
};

// `window` > 0: a query at position p sees keys p-window+1 .. p only.
void Attend(const ModelConfig& config, int layer, int64_t window, std::span<const AttentionSeq> seqs,
            ThreadPool* pool);

// Copies the keys/values of the last positions of `seq` into its cache (only
// as many as the layer keeps). Call after Attend() for that layer.
void StoreKv(const ModelConfig& config, int layer, const AttentionSeq& seq, KvCache* cache);

}  // namespace ragd::inference
