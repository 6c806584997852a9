// MatMul row independence: row i of the product depends only on row i of the
// input and the weights, bitwise, whatever the batch size m, the other rows,
// the thread pool and the path (row kernels for small m, panels for large m).
// A batching scheduler that mixes sequences in one step relies on this.
#include <gtest/gtest.h>

#include <cstring>

#include "inference/kernels/kernel_set.h"
#include "test_util.h"

namespace ragd::inference {
namespace {

using namespace kernels;

std::string TypeName(GgmlType t) { return std::string(GetTypeInfo(static_cast<uint32_t>(t))->name); }

TEST(MatMulRows, EachRowBitwiseEqualsItsSingleRowProduct) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  for (GgmlType type : testing::kAllTypes) {
    const bool k_quant = ActKindFor(type) == ActKind::kQ8K;
    const int64_t n_in = k_quant ? 768 : 640;
    const int64_t n_out = 45;  // partial 8- and 16-row panels at the end
    const auto data = testing::RandomRows(type, n_in, n_out, rng);
    const WeightView w{type, data.data(), n_in, n_out, RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
    // 17 input rows of different magnitudes; batch of m uses rows
    // (start + i) % 17 so each row is seen at several batch positions; m = 40
    // takes the panel path.
    constexpr int64_t kRows = 17;
    std::vector<float> x;
    for (int64_t i = 0; i < kRows; ++i) {
      const auto row = testing::RandomFloats(n_in, rng, 0.1f + 0.5f * static_cast<float>(i));
      x.insert(x.end(), row.begin(), row.end());
    }
    for (const KernelSet* ks : testing::SupportedSets()) {
      std::vector<float> single(kRows * n_out);
      for (int64_t i = 0; i < kRows; ++i) {
        MatMulWith(*ks, w, x.data() + i * n_in, 1, single.data() + i * n_out, nullptr);
      }
      for (const int64_t m : {1, 2, 3, 4, 5, 8, 17, 40}) {
        for (const int64_t start : {int64_t{0}, int64_t{5}}) {
          std::vector<float> batch(m * n_in), got(m * n_out);
          for (int64_t i = 0; i < m; ++i) {
            const int64_t src = (start + i) % kRows;
            std::memcpy(batch.data() + i * n_in, x.data() + src * n_in, n_in * sizeof(float));
          }
          for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
            MatMulWith(*ks, w, batch.data(), m, got.data(), p);
            for (int64_t i = 0; i < m; ++i) {
              const int64_t src = (start + i) % kRows;
              EXPECT_EQ(0, std::memcmp(got.data() + i * n_out, single.data() + src * n_out, n_out * sizeof(float)))
                  << ks->name << " " << TypeName(type) << " m=" << m << " row " << i << " (input row " << src
                  << ")" << (p ? " pool" : "");
            }
          }
        }
      }
    }
  }
}

// A weight packed at load (PackWeight: Q8_0 and Q5_0) gives bitwise the rows
// of its GGUF blocks, for every m, pool or not, and is ignored by the other
// kernel sets; its dequantized rows are those of the blocks; packing hands
// back every byte of the blocks, in order, to the release callback.
TEST(PackedWeight, GivesBitwiseTheRowsOfItsGgufBlocks) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  // A Q4_K weight keeps its blocks (no packed layout for it on any set).
  const auto k_data = testing::RandomRows(GgmlType::kQ4_K, 768, 16, rng);
  EXPECT_EQ(nullptr,
            PackWeight(WeightView{GgmlType::kQ4_K, k_data.data(), 768, 16,
                                  RowBytes(*GetTypeInfo(static_cast<uint32_t>(GgmlType::kQ4_K)), 768)}));
  for (const GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ5_0}) {
    const int64_t n_in = 640, n_out = 45;  // a partial panel at the end
    const auto data = testing::RandomRows(type, n_in, n_out, rng);
    const WeightView plain{type, data.data(), n_in, n_out,
                           RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
    const uint8_t* released = data.data();
    const PackedWeightPtr packed = PackWeight(plain, [&](const uint8_t* begin, const uint8_t* end) {
      EXPECT_EQ(begin, released);
      EXPECT_GT(end, begin);
      released = end;
    });
    if (ActiveKernels().pack == nullptr) {
      EXPECT_EQ(nullptr, packed) << ActiveKernels().name << " has no packed layouts";
      continue;
    }
    ASSERT_NE(nullptr, packed) << ActiveKernels().name << " packs " << TypeName(type);
    EXPECT_EQ(released, data.data() + data.size());
    WeightView w = plain;
    w.packed = packed.get();

    std::vector<float> want(n_in), got_row(n_in);
    for (int64_t r = 0; r < n_out; ++r) {
      DequantizeRow(plain, r, want.data());
      DequantizeRow(w, r, got_row.data());
      EXPECT_EQ(0, std::memcmp(want.data(), got_row.data(), n_in * sizeof(float)))
          << TypeName(type) << " dequantized row " << r;
    }
    constexpr int64_t kRows = 40;
    std::vector<float> x;
    for (int64_t i = 0; i < kRows; ++i) {
      const auto row = testing::RandomFloats(n_in, rng, 0.1f + 0.3f * static_cast<float>(i));
      x.insert(x.end(), row.begin(), row.end());
    }
    for (const KernelSet* ks : testing::SupportedSets()) {
      std::vector<float> single(kRows * n_out);
      for (int64_t i = 0; i < kRows; ++i)
        MatMulWith(*ks, plain, x.data() + i * n_in, 1, single.data() + i * n_out, nullptr);
      for (const int64_t m : {1, 2, 3, 5, 8, 17, 40}) {
        std::vector<float> got(m * n_out);
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          MatMulWith(*ks, w, x.data(), m, got.data(), p);
          for (int64_t i = 0; i < m; ++i) {
            EXPECT_EQ(0,
                      std::memcmp(got.data() + i * n_out, single.data() + i * n_out, n_out * sizeof(float)))
                << ks->name << " " << TypeName(type) << " m=" << m << " row " << i << (p ? " pool" : "");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ragd::inference
