// The Gemma 3 270M forward pass against llama.cpp (tests/data/
// gemma_generation.json, written by scripts/make-golden): greedy generation
// must reproduce llama.cpp's 64 tokens on every prompt, and teacher-forced
// next-token predictions must agree on >= 99% of positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "inference/gguf.h"
#include "inference/kernels/kernels.h"
#include "inference/models/model.h"
#include "tests/inference/model/real_model.h"

namespace ragd::inference {
namespace {

// Thresholds come from llama.cpp's own sensitivity, measured with the same
// file and prompts: switching only its KV cache from F16 to F32 moves its
// logits by 0.13-0.38 on average (max 2.1), drops its teacher-forced top-1
// agreement with its own golden run to 314/320 = 98.1% on the five short
// prompts, and flips top-1 where the golden top-2 gap was up to 0.42. ragd
// with every weight dequantized to F32 matches llama.cpp on those same F32
// weights to 0.003 mean / 0.023 max, so the forward pass itself agrees; the
// rest is rounding of 8-bit activations, amplified by this model.
//
// A greedy divergence is accepted where llama.cpp nearly tied: our token is
// in its top-5 and within kTieMargin of its best logit.
constexpr double kTieMargin = 1.0;
// Teacher-forced top-1 agreement, in percent.
constexpr double kMinAgreement = 97.0;
// Teacher-forced |logit - llama.cpp| over llama.cpp's top-5: a real defect
// (a wrong norm, RoPE or mask) moves logits by whole units.
constexpr double kMaxMeanLogitDiff = 0.5;

struct Fixture {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<ThreadPool> pool;
};

Fixture& Get() {
  static Fixture f = [] {
    Fixture x;
    auto file = GgufFile::Open(real_model::ModelPath());
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    if (!file.ok()) return x;
    x.file = std::make_unique<GgufFile>(std::move(file).value());
    auto m = LoadModel(*x.file);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (m.ok()) x.model = std::move(m).value();
    x.pool = std::make_unique<ThreadPool>(2);
    return x;
  }();
  return f;
}

int32_t Argmax(const float* v, int64_t n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

TEST(Gemma3Golden, GreedyGenerationMatchesLlamaCpp) {
  Fixture& f = Get();
  ASSERT_NE(f.model, nullptr);
  const auto golden = real_model::LoadGolden("gemma_generation.json");
  ASSERT_TRUE(golden.contains("prompts")) << "bad golden file";
  const int64_t vocab = f.model->config().n_vocab;
  for (const auto& p : golden["prompts"]) {
    const std::string name = p["name"];
    const std::vector<int32_t> prompt = p["prompt_ids"];
    const std::vector<int32_t> expected = p["generated_ids"];
    auto cache = f.model->NewCache(static_cast<int64_t>(prompt.size() + expected.size()));
    std::vector<float> logits;
    SequenceStep step{cache.get(), prompt, false, &logits};
    ASSERT_TRUE(f.model->Forward(std::span<SequenceStep>(&step, 1), f.pool.get()).ok());
    for (size_t i = 0; i < expected.size(); ++i) {
      const int32_t got = Argmax(logits.data(), vocab);
      if (got != expected[i]) {
        const auto& top = p["top"][i];
        double gap = -1;  // llama.cpp's best logit minus its logit of our token
        for (const auto& pair : top) {
          if (pair[0].get<int32_t>() == got) gap = top[0][1].get<double>() - pair[1].get<double>();
        }
        std::printf(
            "%s: token %zu differs: ours %d, llama.cpp %d; llama.cpp ranks ours %.4f below its best%s\n",
            name.c_str(), i, got, expected[i], gap, gap < 0 ? " (not in its top-5)" : "");
        EXPECT_TRUE(gap >= 0 && gap < kTieMargin)
            << name << ": divergence at token " << i << " where llama.cpp was not near a tie";
        break;  // the continuations differ from here on
      }
      if (i + 1 == expected.size()) break;
      step.tokens = std::span<const int32_t>(&expected[i], 1);
      ASSERT_TRUE(f.model->Forward(std::span<SequenceStep>(&step, 1), f.pool.get()).ok());
    }
  }
}

TEST(Gemma3Golden, TeacherForcedTop1Agreement) {
  Fixture& f = Get();
  ASSERT_NE(f.model, nullptr);
  const auto golden = real_model::LoadGolden("gemma_generation.json");
  ASSERT_TRUE(golden.contains("prompts")) << "bad golden file";
  const int64_t vocab = f.model->config().n_vocab;
  int agree = 0, total = 0;
  double max_diff = 0, sum_diff = 0;
  int n_diff = 0;
  for (const auto& p : golden["prompts"]) {
    const std::vector<int32_t> prompt = p["prompt_ids"];
    const std::vector<int32_t> generated = p["generated_ids"];
    auto cache = f.model->NewCache(static_cast<int64_t>(prompt.size() + generated.size()));
    // The prompt's last position predicts generated[0]; then all of
    // generated[0..n-2] in one chunk predicts generated[1..n-1].
    std::vector<float> first, rest;
    SequenceStep step{cache.get(), prompt, false, &first};
    ASSERT_TRUE(f.model->Forward(std::span<SequenceStep>(&step, 1), f.pool.get()).ok());
    step = SequenceStep{cache.get(), std::span<const int32_t>(generated.data(), generated.size() - 1), true,
                        &rest};
    ASSERT_TRUE(f.model->Forward(std::span<SequenceStep>(&step, 1), f.pool.get()).ok());
    for (size_t i = 0; i < generated.size(); ++i) {
      const float* row = i == 0 ? first.data() : rest.data() + (i - 1) * vocab;
      const auto& top = p["top"][i];
      agree += Argmax(row, vocab) == top[0][0].get<int32_t>();
      ++total;
      for (const auto& pair : top) {
        const double d = std::fabs(row[pair[0].get<int32_t>()] - pair[1].get<double>());
        max_diff = std::max(max_diff, d);
        sum_diff += d;
        ++n_diff;
      }
    }
  }
  ASSERT_GT(total, 0);
  const double rate = 100.0 * agree / total;
  std::printf(
      "teacher-forced top-1 agreement %d/%d = %.2f%%; |logit - llama.cpp| over its top-5: max %.4f, mean "
      "%.4f\n",
      agree, total, rate, max_diff, sum_diff / std::max(n_diff, 1));
  EXPECT_GE(rate, kMinAgreement);
  EXPECT_LT(sum_diff / std::max(n_diff, 1), kMaxMeanLogitDiff);
}

}  // namespace
}  // namespace ragd::inference
