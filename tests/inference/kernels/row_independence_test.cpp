// MatMul row independence: row i of the product depends only on row i of the
// input and the weights, bitwise, whatever the batch size m, the other rows,
// the thread pool and the path (row kernels for small m, panels for large m).
// A batching scheduler that mixes sequences in one step relies on this.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "inference/kernels/kernel_set.h"
#include "test_util.h"

namespace ragd::inference {
namespace {

using namespace kernels;

std::string TypeName(GgmlType t) { return std::string(GetTypeInfo(static_cast<uint32_t>(t))->name); }

// `rows` random input rows of n values, row i of scale 0.1 + step * i, one
// after the other.
std::vector<float> RowsOfGrowingScale(int64_t rows, int64_t n, float step, std::mt19937& rng) {
  std::vector<float> x;
  for (int64_t i = 0; i < rows; ++i) {
    const auto row = testing::RandomFloats(n, rng, 0.1f + step * static_cast<float>(i));
    x.insert(x.end(), row.begin(), row.end());
  }
  return x;
}

TEST(MatMulRows, EachRowBitwiseEqualsItsSingleRowProduct) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  for (GgmlType type : testing::kAllTypes) {
    const bool k_quant = ActKindFor(type) == ActKind::kQ8K;
    const int64_t n_in = k_quant ? 768 : 640;
    const int64_t n_out = 45;  // partial 8- and 16-row panels at the end
    const auto data = testing::RandomRows(type, n_in, n_out, rng);
    const WeightView w{type, data.data(), n_in, n_out,
                       RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
    // 17 input rows of different magnitudes; batch of m uses rows
    // (start + i) % 17 so each row is seen at several batch positions; m = 40
    // takes the panel path.
    constexpr int64_t kRows = 17;
    const std::vector<float> x = RowsOfGrowingScale(kRows, n_in, 0.5f, rng);
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
              EXPECT_EQ(
                  0, std::memcmp(got.data() + i * n_out, single.data() + src * n_out, n_out * sizeof(float)))
                  << ks->name << " " << TypeName(type) << " m=" << m << " row " << i << " (input row " << src
                  << ")" << (p ? " pool" : "");
            }
          }
        }
      }
    }
  }
}

// A weight packed at load (PackWeight: Q8_0, Q5_0, Q4_K and Q6_K) gives bitwise the
// rows of its GGUF blocks, for every m, pool or not, and is ignored by the
// other kernel sets; its dequantized rows are those of the blocks; packing
// hands back every byte of the blocks, in order, to the release callback.
TEST(PackedWeight, GivesBitwiseTheRowsOfItsGgufBlocks) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  // A Q5_K weight keeps its blocks (no packed layout for it on any set).
  const auto k_data = testing::RandomRows(GgmlType::kQ5_K, 768, 16, rng);
  EXPECT_EQ(nullptr,
            PackWeight(WeightView{GgmlType::kQ5_K, k_data.data(), 768, 16,
                                  RowBytes(*GetTypeInfo(static_cast<uint32_t>(GgmlType::kQ5_K)), 768)}));
  for (const GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ5_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    // A partial panel at the end; K-quants: three super-blocks.
    const bool k_quant = ActKindFor(type) == ActKind::kQ8K;
    const int64_t n_in = k_quant ? 768 : 640, n_out = 45;
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
    const std::vector<float> x = RowsOfGrowingScale(kRows, n_in, 0.3f, rng);
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

// SumOrder::kBlockSums on a packed Q8_0 weight (the tied output's product):
// every output is exactly the block-by-block sum fma(float(block's integer
// dot), d_w*d_a, sum), for every m, pool or not (row independence); within
// float rounding of llama.cpp's order; and ignored where the weight is read
// in its GGUF blocks (the other kernel sets, or no packed copy).
TEST(PackedWeight, BlockSumsAreExactBlockByBlockSums) {
  std::mt19937 rng(8);
  ThreadPool pool(2);
  const GgmlType type = GgmlType::kQ8_0;
  // 61 rows: without the pool two pairs of panels, the second pair ending in
  // a partial panel; on the pool single panels.
  const int64_t n_in = 640, n_out = 61, nb = n_in / 32;
  const auto data = testing::RandomRows(type, n_in, n_out, rng);
  WeightView plain{type, data.data(), n_in, n_out, RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
  const PackedWeightPtr packed = PackWeight(plain);
  WeightView unpacked = plain;
  unpacked.order = SumOrder::kBlockSums;
  WeightView w = unpacked;
  w.packed = packed.get();
  constexpr int64_t kRows = 40;
  const std::vector<float> x = RowsOfGrowingScale(kRows, n_in, 0.3f, rng);
  for (const KernelSet* ks : testing::SupportedSets()) {
    std::vector<float> llama(kRows * n_out), ignored(kRows * n_out);
    MatMulWith(*ks, plain, x.data(), kRows, llama.data(), nullptr);
    MatMulWith(*ks, unpacked, x.data(), kRows, ignored.data(), nullptr);
    EXPECT_EQ(0, std::memcmp(llama.data(), ignored.data(), llama.size() * sizeof(float)))
        << ks->name << ": without a packed copy the order is llama.cpp's";
    if (packed == nullptr || packed->kernels != ks) continue;
    std::vector<float> want(kRows * n_out);
    std::vector<BlockQ8A> act(nb);
    for (int64_t i = 0; i < kRows; ++i) {
      ks->quantize_q8a(x.data() + i * n_in, n_in, act.data());
      for (int64_t r = 0; r < n_out; ++r) {
        const auto* blocks = reinterpret_cast<const BlockQ8_0*>(data.data() + r * plain.row_bytes);
        float sum = 0, magnitude = 0;  // of the block terms: the rounding scale
        for (int64_t b = 0; b < nb; ++b) {
          int32_t dot = 0;
          for (int j = 0; j < 32; ++j) dot += int32_t{blocks[b].qs[j]} * act[b].qs[j];
          const float d = HalfToFloat(blocks[b].d) * act[b].d;
          sum = std::fma(static_cast<float>(dot), d, sum);
          magnitude += std::fabs(static_cast<float>(dot) * d);
        }
        want[i * n_out + r] = sum;
        EXPECT_NEAR(sum, llama[i * n_out + r], 1e-6f * magnitude) << "row " << i << " out " << r;
      }
    }
    for (const int64_t m : {1, 2, 3, 5, 8, 9, 10, 17, 40}) {
      std::vector<float> got(m * n_out);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        MatMulWith(*ks, w, x.data(), m, got.data(), p);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << ks->name << " m=" << m << (p ? " pool" : "");
      }
    }
  }
}

// MatMulShared (a layer's q/k/v or gate/up in one pass over the pool) gives
// each weight bitwise its own MatMul: packed and GGUF weights of different
// types and heights together, for every m, pool or not; weights it cannot
// share a quantization between (another input width or activation kind) are
// multiplied one by one, with the same results.
TEST(MatMulShared, EachTargetBitwiseEqualsItsOwnMatMul) {
  std::mt19937 rng(13);
  ThreadPool pool(2);
  struct Weight {
    std::vector<uint8_t> data;
    PackedWeightPtr packed;
    WeightView view;
  };
  auto make = [&](GgmlType type, int64_t n_in, int64_t n_out, bool pack) {
    Weight w;
    w.data = testing::RandomRows(type, n_in, n_out, rng);
    w.view = WeightView{type, w.data.data(), n_in, n_out,
                        RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
    if (pack) {
      w.packed = PackWeight(w.view);
      w.view.packed = w.packed.get();
    }
    return w;
  };
  std::vector<Weight> shared;  // one input width and activation kind (Q8A)
  shared.push_back(make(GgmlType::kQ5_0, 640, 45, true));
  shared.push_back(make(GgmlType::kQ5_0, 640, 16, false));
  shared.push_back(make(GgmlType::kQ8_0, 640, 33, true));
  std::vector<Weight> mixed;  // another width, and a K-quant (Q8K activations)
  mixed.push_back(make(GgmlType::kQ8_0, 768, 20, true));
  mixed.push_back(make(GgmlType::kQ4_K, 768, 24, false));
  std::vector<Weight> prepared;  // K-quants whose panels prepare the activations (m >= 4)
  prepared.push_back(make(GgmlType::kQ4_K, 768, 40, false));
  prepared.push_back(make(GgmlType::kQ5_K, 768, 24, false));
  std::vector<Weight> prepared_legacy;  // the same for Q4_1 and Q5_1 (Q8A activations)
  prepared_legacy.push_back(make(GgmlType::kQ8_0, 640, 16, true));
  prepared_legacy.push_back(make(GgmlType::kQ4_1, 640, 40, false));
  prepared_legacy.push_back(make(GgmlType::kQ5_1, 640, 24, false));
  for (const std::vector<Weight>* set : {&shared, &mixed, &prepared, &prepared_legacy}) {
    const int64_t n_in = (*set)[0].view.n_in;
    const std::vector<float> x = RowsOfGrowingScale(40, n_in, 0.3f, rng);
    for (const KernelSet* ks : testing::SupportedSets()) {
      for (const int64_t m : {1, 2, 3, 8, 9, 17, 40}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          std::vector<std::vector<float>> want(set->size()), got(set->size());
          std::vector<MatMulTarget> targets;
          for (size_t i = 0; i < set->size(); ++i) {
            const WeightView& w = (*set)[i].view;
            want[i].resize(m * w.n_out);
            got[i].assign(m * w.n_out, -1.0f);
            MatMulWith(*ks, w, x.data(), m, want[i].data(), p);
            targets.push_back({&w, got[i].data()});
          }
          MatMulSharedWith(*ks, targets, x.data(), m, p);
          for (size_t i = 0; i < set->size(); ++i) {
            EXPECT_EQ(0, std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)))
                << ks->name << " target " << i << " of " << set->size() << " (n_in " << n_in << ") m=" << m
                << (p ? " pool" : "");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ragd::inference
