// Checks tokenization and embeddings of the real all-MiniLM-L6-v2 against
// tests/data/minilm_golden.json (written by scripts/make-embedding-golden).
#include "retrieval/embedder.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/retrieval/test_models.h"

namespace ragd::retrieval {
namespace {

using testing::MiniLmDir;

const Embedder& Model() {
  static std::unique_ptr<Embedder> model = [] {
    auto m = Embedder::Load(MiniLmDir());
    if (!m.ok()) {
      ADD_FAILURE() << "cannot load " << MiniLmDir() << ": " << m.status().ToString();
      std::abort();
    }
    return std::move(m.value());
  }();
  return *model;
}

nlohmann::json Golden() {
  std::ifstream in(testing::SourceDir() + "/tests/data/minilm_golden.json");
  EXPECT_TRUE(in.good()) << "missing tests/data/minilm_golden.json";
  return nlohmann::json::parse(in);
}

double Cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * static_cast<double>(a[i]);
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

TEST(EmbedderTest, ShapeFromConfig) {
  EXPECT_EQ(Model().dimension(), 384);
  EXPECT_EQ(Model().max_tokens(), 256u);
  EXPECT_EQ(Model().name(), "all-MiniLM-L6-v2");
}

TEST(EmbedderTest, TokenIdsMatchGolden) {
  auto golden = Golden();
  ASSERT_GE(golden["cases"].size(), 25u);
  for (const auto& c : golden["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(Model().Encode(text), c["ids"].get<std::vector<int32_t>>()) << text;
  }
}

TEST(EmbedderTest, EmbeddingsMatchGolden) {
  auto golden = Golden();
  std::vector<std::string> texts;
  for (const auto& c : golden["cases"]) texts.push_back(c["text"]);
  auto embs = Model().Embed(texts);  // one batched call: mixed lengths in one pass
  ASSERT_TRUE(embs.ok());
  ASSERT_EQ(embs->size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto want = golden["cases"][i]["embedding"].get<std::vector<double>>();
    ASSERT_EQ((*embs)[i].size(), want.size());
    EXPECT_GE(Cosine((*embs)[i], want), 0.999) << texts[i];
    double norm = 0;
    for (float f : (*embs)[i]) norm += f * static_cast<double>(f);
    EXPECT_NEAR(norm, 1.0, 1e-4);
  }
}

TEST(EmbedderTest, BatchingDoesNotChangeResults) {
  auto one = Model().EmbedOne("Paris is the capital of France.");
  auto many = Model().Embed({"a much longer sentence that pads the batch with more tokens than the other one",
                             "Paris is the capital of France.", "x"});
  ASSERT_TRUE(one.ok() && many.ok());
  for (size_t j = 0; j < one->size(); ++j) EXPECT_NEAR((*one)[j], (*many)[1][j], 1e-5);
}

// A batch of several long texts is split over OpenBLAS's thread count (see
// retrieval/bert.h); the split must give the same vectors as one thread and
// leave the OpenBLAS setting as it was.
TEST(EmbedderTest, SplitBatchMatchesOneThread) {
  std::vector<std::string> texts;
  for (int i = 0; i < 7; ++i) {
    std::string t;
    for (int w = 0; w < 40 + 25 * i; ++w) t += "word" + std::to_string((w * 7 + i) % 31) + " ";
    texts.push_back(t);
  }
  const int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  auto serial = Model().Embed(texts);
  openblas_set_num_threads(2);
  auto split = Model().Embed(texts);
  EXPECT_EQ(openblas_get_num_threads(), 2);
  openblas_set_num_threads(saved);
  ASSERT_TRUE(serial.ok() && split.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    for (size_t j = 0; j < (*serial)[i].size(); ++j) EXPECT_NEAR((*serial)[i][j], (*split)[i][j], 1e-5) << i;
  }
}

TEST(EmbedderTest, SimilarTextsAreCloser) {
  auto e = Model().Embed({"How do I reset my password?", "Steps to change a forgotten password",
                          "The migration of birds in autumn"});
  ASSERT_TRUE(e.ok());
  auto dot = [](const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  EXPECT_GT(dot((*e)[0], (*e)[1]), dot((*e)[0], (*e)[2]) + 0.2);
}

TEST(EmbedderTest, ConcurrentCallsAgree) {
  auto ref = Model().EmbedOne("concurrency check");
  ASSERT_TRUE(ref.ok());
  std::vector<std::thread> threads;
  std::vector<int> same(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto r = Model().EmbedOne("concurrency check");
      same[t] = r.ok() && *r == *ref;
    });
  }
  for (auto& th : threads) th.join();
  for (int s : same) EXPECT_EQ(s, 1);
}

TEST(EmbedderTest, CountTokensIsUntruncated) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "word ";
  EXPECT_EQ(Model().CountTokens(text), 300u);
  EXPECT_EQ(Model().Encode(text).size(), 256u);
}

TEST(EmbedderTest, MissingFolderIsNotFound) {
  auto m = Embedder::Load("/nonexistent/model");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ragd::retrieval
