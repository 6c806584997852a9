// ThreadPool: every index covered exactly once by contiguous per-thread
// ranges, repeated runs, more threads than items.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <vector>

#include "inference/kernels/kernels.h"

namespace ragd::inference {
namespace {

TEST(ThreadPool, PartitionsContiguouslyAndCompletely) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(n);
      std::mutex mu;
      std::set<int> thread_ids;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      pool.Run(n, [&](int64_t b, int64_t e, int t) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
        std::lock_guard<std::mutex> lock(mu);
        thread_ids.insert(t);
        ranges.emplace_back(b, e);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_LE(static_cast<int>(ranges.size()), threads);
      EXPECT_EQ(static_cast<int64_t>(ranges.size()), std::min<int64_t>(threads, n));
      for (int t : thread_ids) EXPECT_TRUE(t >= 0 && t < threads);
      for (auto [b, e] : ranges) EXPECT_LT(b, e);
    }
  }
}

TEST(ThreadPool, RunDynamicCoversEveryIndexInGrainSizedChunks) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 5, 64, 1000}) {
      for (int64_t grain : {1, 3, 16, 5000}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> bad_chunks{0}, bad_threads{0};
        pool.RunDynamic(n, grain, [&](int64_t b, int64_t e, int t) {
          if (b % grain != 0 || (e - b != grain && e != n) || b >= e) bad_chunks++;
          if (t < 0 || t >= threads) bad_threads++;
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << grain << " " << i;
        EXPECT_EQ(bad_chunks.load(), 0);
        EXPECT_EQ(bad_threads.load(), 0);
      }
    }
  }
}

// Run and RunDynamic interleaved many times: no lost or repeated work.
TEST(ThreadPool, ManyShortRuns) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int r = 0; r < 5000; ++r) {
    pool.Run(10, [&](int64_t b, int64_t e, int) { total += e - b; });
    pool.RunDynamic(7, 2, [&](int64_t b, int64_t e, int) { total += e - b; });
  }
  EXPECT_EQ(total.load(), 5000 * 17);
}

TEST(ThreadPool, DefaultSizeAndEmptyRun) {
  ThreadPool pool(0);
  EXPECT_GE(pool.size(), 1);
  bool called = false;
  pool.Run(0, [&](int64_t, int64_t, int) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace ragd::inference
