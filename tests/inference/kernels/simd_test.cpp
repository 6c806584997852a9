// Every kernel set the CPU supports, called directly, against the scalar
// reference: activation quantization, single dot products, and MatMul for
// several batch sizes, with and without a thread pool.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "inference/kernels/cpu_features.h"
#include "inference/kernels/elementwise_impl.h"
#include "inference/kernels/kernel_set.h"
#include "test_util.h"

namespace ragd::inference {
namespace {

using namespace kernels;

std::string TypeName(GgmlType t) { return std::string(GetTypeInfo(static_cast<uint32_t>(t))->name); }

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  float mx = 0;
  for (float v : want) mx = std::max(mx, std::fabs(v));
  const float tol = 1e-4f * mx + 1e-7f;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << what << " index " << i << ": got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
}

TEST(KernelSets, ScalarAlwaysPresentAndActiveIsBest) {
  const auto sets = testing::SupportedSets();
  ASSERT_FALSE(sets.empty());
  EXPECT_STREQ(sets.back()->name, "scalar");
  if (std::getenv("RAGD_KERNELS") == nullptr) {
    EXPECT_EQ(&ActiveKernels(), sets.front());
  }
  EXPECT_EQ(KernelIsaName(), ActiveKernels().name);
  EXPECT_STREQ(sets.front()->name, IsaLevelName(SupportedLevel()));
  if (HostCpu().avx512vnni && HostCpu().avx512bw) {
    EXPECT_STREQ(sets.front()->name, "avx512vnni");
  }
}

// RAGD_KERNELS names the level of every vectorised path: the matmul set and
// the element-wise set are those of ActiveLevel(), which is the named level
// when the CPU supports it.
TEST(KernelSets, OneLevelForEveryPath) {
  EXPECT_STREQ(ActiveKernels().name, IsaLevelName(ActiveLevel()));
  const ElementwiseSet* want = &kScalarElementwise;
  if (ActiveLevel() == IsaLevel::kAvx2) want = &kAvx2Elementwise;
  if (ActiveLevel() == IsaLevel::kAvx512Vnni) want = &kAvx512Elementwise;
  EXPECT_EQ(&ActiveElementwise(), want);
  EXPECT_LE(static_cast<int>(ActiveLevel()), static_cast<int>(SupportedLevel()));
  const char* env = std::getenv("RAGD_KERNELS");
  if (env == nullptr) {
    EXPECT_EQ(ActiveLevel(), SupportedLevel());
    return;
  }
  for (int l = 0; l <= static_cast<int>(SupportedLevel()); ++l) {
    if (std::strcmp(env, IsaLevelName(static_cast<IsaLevel>(l))) == 0) {
      EXPECT_EQ(static_cast<int>(ActiveLevel()), l);
    }
  }
}

TEST(KernelSets, QuantizeMatchesReference) {
  std::mt19937 rng(10);
  const int64_t n = 1024;
  auto x = testing::RandomFloats(n, rng, 2.0f);
  for (int i = 0; i < 32; ++i) x[64 + i] = 0;  // an all-zero block
  x[300] = 40.0f;                              // an outlier
  std::vector<BlockQ8A> qa_ref(n / 32), qa(n / 32);
  std::vector<BlockQ8K> qk_ref(n / 256), qk(n / 256);
  QuantizeQ8ARef(x.data(), n, qa_ref.data());
  QuantizeQ8KRef(x.data(), n, qk_ref.data());
  for (const KernelSet* ks : testing::SupportedSets()) {
    SCOPED_TRACE(ks->name);
    ks->quantize_q8a(x.data(), n, qa.data());
    ks->quantize_q8k(x.data(), n, qk.data());
    for (int b = 0; b < n / 32; ++b) {
      EXPECT_FLOAT_EQ(qa[b].d, qa_ref[b].d);
      EXPECT_EQ(qa[b].sum, qa_ref[b].sum);
      // Rounding of exact halves may differ by one step between sets.
      for (int j = 0; j < 32; ++j) EXPECT_NEAR(qa[b].qs[j], qa_ref[b].qs[j], 1) << b << " " << j;
    }
    for (int b = 0; b < n / 256; ++b) {
      EXPECT_FLOAT_EQ(qk[b].d, qk_ref[b].d);
      for (int j = 0; j < 256; ++j) EXPECT_NEAR(qk[b].qs[j], qk_ref[b].qs[j], 1);
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += qk[b].qs[16 * g + j];
        EXPECT_EQ(qk[b].bsums[g], s);
      }
    }
  }
}

TEST(KernelSets, VecDotMatchesReference) {
  std::mt19937 rng(11);
  for (const int64_t n : {256, 768, 2048}) {
    for (GgmlType type : testing::kAllTypes) {
      const auto w = testing::RandomRows(type, n, 1, rng);
      const auto x = testing::RandomFloats(n, rng);
      std::vector<uint8_t> act(ActRowBytes(type, n));
      if (ActKindFor(type) == ActKind::kQ8A) {
        QuantizeQ8ARef(x.data(), n, reinterpret_cast<BlockQ8A*>(act.data()));
      } else if (ActKindFor(type) == ActKind::kQ8K) {
        QuantizeQ8KRef(x.data(), n, reinterpret_cast<BlockQ8K*>(act.data()));
      } else {
        std::memcpy(act.data(), x.data(), n * 4);
      }
      const float want = VecDotRef(type, n, w.data(), act.data());
      for (const KernelSet* ks : testing::SupportedSets()) {
        ExpectClose({ks->vec_dot(type, n, w.data(), act.data())}, {want},
                    std::string(ks->name) + " " + TypeName(type) + " n=" + std::to_string(n));
      }
    }
  }
}

// MatMul through each set, for the batch sizes the engine uses, compared with
// the scalar set (same activation quantization, so only summation order differs).
TEST(KernelSets, MatMulMatchesReferenceForEveryBatchSize) {
  std::mt19937 rng(12);
  ThreadPool pool(2);
  for (GgmlType type : testing::kAllTypes) {
    const bool k_quant = ActKindFor(type) == ActKind::kQ8K;
    // 96: a row length that is not a multiple of 64 values (panel tail).
    for (const int64_t n_in :
         {k_quant ? int64_t{768} : int64_t{640}, int64_t{1024}, k_quant ? int64_t{256} : int64_t{96}}) {
      const int64_t n_out = 37;  // a partial 16-row panel at the end
      const auto data = testing::RandomRows(type, n_in, n_out, rng);
      const WeightView w{type, data.data(), n_in, n_out,
                         RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
      for (const int64_t m : {1, 2, 3, 5, 8, 17, 40}) {
        const auto x = testing::RandomFloats(n_in * m, rng);
        std::vector<float> want(n_out * m), got(n_out * m);
        MatMulWith(kScalarKernels, w, x.data(), m, want.data(), nullptr);
        for (const KernelSet* ks : testing::SupportedSets()) {
          for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
            std::fill(got.begin(), got.end(), NAN);
            MatMulWith(*ks, w, x.data(), m, got.data(), p);
            ExpectClose(got, want,
                        std::string(ks->name) + " " + TypeName(type) + " n_in=" + std::to_string(n_in) +
                            " m=" + std::to_string(m) + (p ? " pool" : ""));
          }
        }
      }
    }
  }
}

// The quantized product stays close to the float product of the dequantized
// weights (catches a wrong activation layout that the set-vs-set test cannot).
TEST(KernelSets, MatMulCloseToFloatProduct) {
  std::mt19937 rng(13);
  const int64_t n_in = 512, n_out = 24;
  for (const int64_t m : {3, 20})
    for (GgmlType type : testing::kAllTypes) {
      const auto data = testing::RandomRows(type, n_in, n_out, rng);
      const WeightView w{type, data.data(), n_in, n_out,
                         RowBytes(*GetTypeInfo(static_cast<uint32_t>(type)), n_in)};
      const auto x = testing::RandomFloats(n_in * m, rng);
      std::vector<float> y(n_out * m), row(n_in);
      MatMul(w, x.data(), m, y.data(), nullptr);
      double err = 0, norm = 0;
      for (int64_t o = 0; o < n_out; ++o) {
        DequantizeRow(w, o, row.data());
        for (int64_t c = 0; c < m; ++c) {
          double want = 0;
          for (int64_t k = 0; k < n_in; ++k) want += static_cast<double>(row[k]) * x[c * n_in + k];
          err += (y[c * n_out + o] - want) * (y[c * n_out + o] - want);
          norm += want * want;
        }
      }
      EXPECT_LT(std::sqrt(err / norm), 0.02) << TypeName(type) << " m=" << m;
    }
}

}  // namespace
}  // namespace ragd::inference
