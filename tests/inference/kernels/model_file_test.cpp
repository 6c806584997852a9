// The block layouts against the real Gemma 3 270M Q4_K_M file: tensor types
// and shapes, dequantized weights that look like trained weights, and MatMul
// on real tensors against the float product of the dequantized rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "inference/gguf.h"
#include "inference/kernels/kernel_set.h"
#include "test_util.h"
#include "tests/support/test_paths.h"

namespace ragd::inference {
namespace {

std::string ModelPath() { return ragd::testing::GemmaModelPath(); }

WeightView View(const GgufTensor& t) {
  return WeightView{t.type, t.data, static_cast<int64_t>(t.ne[0]), static_cast<int64_t>(t.n_rows()),
                    t.row_bytes()};
}

class ModelFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = GgufFile::Open(ModelPath());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    file_ = new GgufFile(std::move(r).value());
  }
  static void TearDownTestSuite() {
    delete file_;
    file_ = nullptr;
  }
  static GgufFile* file_;
};
GgufFile* ModelFile::file_ = nullptr;

TEST_F(ModelFile, TensorTypesAreTheOnesTheKernelsCover) {
  ASSERT_NE(file_, nullptr);
  const GgufTensor* embd = file_->FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, GgmlType::kQ8_0);
  EXPECT_EQ(embd->ne[0], 640u);
  EXPECT_EQ(embd->ne[1], 262144u);
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight",
                           "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}) {
    const GgufTensor* t = file_->FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->ne[0], 640u) << name;
    EXPECT_TRUE(t->type == GgmlType::kQ5_0 || t->type == GgmlType::kQ8_0) << name;
  }
  for (const GgufTensor& t : file_->tensors()) {
    EXPECT_NE(kernels::ActKindFor(t.type), kernels::ActKind::kUnsupported) << t.name;
    if (t.n_dims == 1) {
      EXPECT_EQ(t.type, GgmlType::kF32) << t.name;
    }
  }
}

// Trained weight rows are centred near zero with no huge values; a wrong
// nibble order, min sign or scale unpacking shifts or blows them up.
TEST_F(ModelFile, DequantizedRowsLookLikeWeights) {
  ASSERT_NE(file_, nullptr);
  int checked = 0;
  for (const GgufTensor& t : file_->tensors()) {
    if (t.n_dims != 2) continue;
    const WeightView w = View(t);
    std::vector<float> row(w.n_in);
    double sum = 0, sq = 0, mx = 0;
    const int64_t rows = std::min<int64_t>(w.n_out, 64);
    for (int64_t r = 0; r < rows; ++r) {
      DequantizeRow(w, r * (w.n_out / rows), row.data());
      for (float v : row) {
        ASSERT_TRUE(std::isfinite(v)) << t.name;
        sum += v;
        sq += static_cast<double>(v) * v;
        mx = std::max(mx, std::fabs(static_cast<double>(v)));
      }
    }
    const double count = static_cast<double>(rows * w.n_in);
    const double mean = sum / count, rms = std::sqrt(sq / count);
    EXPECT_LT(std::fabs(mean), 0.1 * rms + 1e-3) << t.name;
    EXPECT_GT(rms, 1e-4) << t.name;
    EXPECT_LT(mx, 100 * rms) << t.name;
    ++checked;
  }
  EXPECT_GT(checked, 18 * 7);
}

TEST_F(ModelFile, MatMulOnRealTensorsMatchesFloatProduct) {
  ASSERT_NE(file_, nullptr);
  std::mt19937 rng(30);
  ThreadPool pool(2);
  for (const char* name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.attn_output.weight",
                           "blk.0.ffn_down.weight", "blk.3.ffn_down.weight", "blk.5.ffn_up.weight"}) {
    const GgufTensor* t = file_->FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    WeightView w = View(*t);
    w.n_out = std::min<int64_t>(w.n_out, 96);  // a slice of rows is enough
    for (int64_t m : {1, 5}) {
      const auto x = testing::RandomFloats(w.n_in * m, rng);
      for (const kernels::KernelSet* ks : testing::SupportedSets()) {
        std::vector<float> y(w.n_out * m), row(w.n_in);
        kernels::MatMulWith(*ks, w, x.data(), m, y.data(), &pool);
        double err = 0, norm = 0;
        for (int64_t o = 0; o < w.n_out; ++o) {
          DequantizeRow(w, o, row.data());
          for (int64_t c = 0; c < m; ++c) {
            double want = 0;
            for (int64_t k = 0; k < w.n_in; ++k) want += static_cast<double>(row[k]) * x[c * w.n_in + k];
            err += (y[c * w.n_out + o] - want) * (y[c * w.n_out + o] - want);
            norm += want * want;
          }
        }
        EXPECT_LT(std::sqrt(err / norm), 0.02) << name << " " << ks->name << " m=" << m;
      }
    }
  }
}

}  // namespace
}  // namespace ragd::inference
