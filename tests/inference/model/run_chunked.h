// Helpers of the tiny-model tests: a model run over a token list in chunks,
// and the largest difference of two logit rows. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "inference/models/model.h"

namespace ragd::inference::testing_model {

using Logits = std::vector<std::vector<float>>;

// Runs `tokens` through a fresh cache in chunks of the given sizes (cycled);
// the logits of every position (a failed step is a test failure).
inline Logits RunChunked(Model& model, const std::vector<int32_t>& tokens, const std::vector<int>& chunks,
                         ThreadPool* pool) {
  auto cache = model.NewCache(static_cast<int64_t>(tokens.size()));
  const size_t v = model.config().n_vocab;
  Logits out;
  for (size_t pos = 0, c = 0; pos < tokens.size();) {
    const size_t n = std::min<size_t>(chunks[c++ % chunks.size()], tokens.size() - pos);
    std::vector<float> logits;
    SequenceStep step{cache.get(), std::span<const int32_t>(tokens.data() + pos, n), true, &logits};
    const Status st = model.Forward(std::span<SequenceStep>(&step, 1), pool);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return out;
    EXPECT_EQ(logits.size(), n * v);
    for (size_t i = 0; i < n; ++i) out.emplace_back(logits.begin() + i * v, logits.begin() + (i + 1) * v);
    pos += n;
  }
  return out;
}

inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

}  // namespace ragd::inference::testing_model
