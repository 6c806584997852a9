// A tiny random BERT written by the test (config.json, vocab.txt,
// model.safetensors): the encoder must follow config.json's shape, accept the
// "bert." prefix and F16 weights, and match a plain double-precision forward
// pass written here independently.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "retrieval/embedder.h"
#include "tests/support/temp_dir.h"

namespace ragd::retrieval {
namespace {

constexpr int kLayers = 2, kHidden = 8, kHeads = 2, kInter = 16, kMaxPos = 16;
const std::vector<std::string> kVocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello",
                                         "world", "the",   "cat",   "sat",   "on",     "mat",
                                         "##s",   ",",     "!",     "a"};

using Tensors = std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>;

Tensors RandomWeights(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 0.5f);
  Tensors t;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float offset = 0.f) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    for (float& f : v) f = offset + normal(rng);
    t[name] = {shape, v};
  };
  add("embeddings.word_embeddings.weight", {static_cast<int64_t>(kVocab.size()), kHidden});
  add("embeddings.position_embeddings.weight", {kMaxPos, kHidden});
  add("embeddings.token_type_embeddings.weight", {2, kHidden});
  add("embeddings.LayerNorm.weight", {kHidden}, 1.f);
  add("embeddings.LayerNorm.bias", {kHidden});
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* m :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
      add(p + m + ".weight", {kHidden, kHidden});
      add(p + m + ".bias", {kHidden});
    }
    add(p + "attention.output.LayerNorm.weight", {kHidden}, 1.f);
    add(p + "attention.output.LayerNorm.bias", {kHidden});
    add(p + "intermediate.dense.weight", {kInter, kHidden});
    add(p + "intermediate.dense.bias", {kInter});
    add(p + "output.dense.weight", {kHidden, kInter});
    add(p + "output.dense.bias", {kHidden});
    add(p + "output.LayerNorm.weight", {kHidden}, 1.f);
    add(p + "output.LayerNorm.bias", {kHidden});
  }
  add("pooler.dense.weight", {kHidden, kHidden});  // present in real files, ignored
  return t;
}

uint16_t FloatToHalf(float f) {  // round-to-nearest, normal range only (enough here)
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((b >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = b & 0x7FFFFF;
  if (exp <= 0) return static_cast<uint16_t>(sign);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  if (mant & 0x1000) ++h;
  return static_cast<uint16_t>(h);
}

void WriteModel(const std::string& dir, const Tensors& t, const std::string& prefix, bool f16,
                const std::string& act = "gelu") {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, tensor] : t) {
    const size_t begin = data.size();
    for (float f : tensor.second) {
      if (f16) {
        uint16_t h = FloatToHalf(f);
        data.append(reinterpret_cast<const char*>(&h), 2);
      } else {
        data.append(reinterpret_cast<const char*>(&f), 4);
      }
    }
    header[prefix + name] = {
        {"dtype", f16 ? "F16" : "F32"}, {"shape", tensor.first}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  const uint64_t n = h.size();
  std::ofstream out(dir + "/model.safetensors", std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
  std::ofstream(dir + "/config.json") << nlohmann::json{
      {"num_hidden_layers", kLayers},
      {"hidden_size", kHidden},
      {"num_attention_heads", kHeads},
      {"intermediate_size", kInter},
      {"max_position_embeddings", kMaxPos},
      {"vocab_size", kVocab.size()},
      {"type_vocab_size", 2},
      {"layer_norm_eps", 1e-12},
      {"hidden_act", act}}.dump();
  std::ofstream vocab(dir + "/vocab.txt");
  for (const auto& v : kVocab) vocab << v << "\n";
  std::ofstream(dir + "/sentence_bert_config.json") << R"({"max_seq_length": 10})";
}

// Plain reference forward pass in double precision.
std::vector<double> Reference(const Tensors& t, const std::vector<int32_t>& ids) {
  const int n = static_cast<int>(ids.size()), dh = kHidden / kHeads;
  auto w = [&](const std::string& name) -> const std::vector<float>& { return t.at(name).second; };
  auto ln = [&](std::vector<double>& x, const std::string& p) {
    for (int i = 0; i < n; ++i) {
      double mean = 0, var = 0;
      for (int j = 0; j < kHidden; ++j) mean += x[i * kHidden + j] / kHidden;
      for (int j = 0; j < kHidden; ++j) var += std::pow(x[i * kHidden + j] - mean, 2) / kHidden;
      for (int j = 0; j < kHidden; ++j) {
        x[i * kHidden + j] =
            (x[i * kHidden + j] - mean) / std::sqrt(var + 1e-12) * w(p + ".weight")[j] + w(p + ".bias")[j];
      }
    }
  };
  auto linear = [&](const std::vector<double>& x, int in, int out, const std::string& p) {
    std::vector<double> y(static_cast<size_t>(n) * out);
    for (int i = 0; i < n; ++i) {
      for (int o = 0; o < out; ++o) {
        double s = w(p + ".bias")[o];
        for (int k = 0; k < in; ++k) s += x[i * in + k] * w(p + ".weight")[o * in + k];
        y[i * out + o] = s;
      }
    }
    return y;
  };
  std::vector<double> x(static_cast<size_t>(n) * kHidden);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < kHidden; ++j) {
      x[i * kHidden + j] = w("embeddings.word_embeddings.weight")[ids[i] * kHidden + j] +
                           w("embeddings.position_embeddings.weight")[i * kHidden + j] +
                           w("embeddings.token_type_embeddings.weight")[j];
    }
  }
  ln(x, "embeddings.LayerNorm");
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    auto q = linear(x, kHidden, kHidden, p + "attention.self.query");
    auto k = linear(x, kHidden, kHidden, p + "attention.self.key");
    auto v = linear(x, kHidden, kHidden, p + "attention.self.value");
    std::vector<double> ctx(x.size(), 0.0);
    for (int h = 0; h < kHeads; ++h) {
      for (int i = 0; i < n; ++i) {
        std::vector<double> s(n);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < n; ++j) {
          for (int d = 0; d < dh; ++d) s[j] += q[i * kHidden + h * dh + d] * k[j * kHidden + h * dh + d];
          s[j] /= std::sqrt(static_cast<double>(dh));
          mx = std::max(mx, s[j]);
        }
        for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j < n; ++j) {
          for (int d = 0; d < dh; ++d)
            ctx[i * kHidden + h * dh + d] += s[j] / sum * v[j * kHidden + h * dh + d];
        }
      }
    }
    auto a = linear(ctx, kHidden, kHidden, p + "attention.output.dense");
    for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    ln(x, p + "attention.output.LayerNorm");
    auto u = linear(x, kHidden, kInter, p + "intermediate.dense");
    for (double& f : u) f = 0.5 * f * (1 + std::erf(f / std::sqrt(2.0)));
    auto o = linear(u, kInter, kHidden, p + "output.dense");
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    ln(x, p + "output.LayerNorm");
  }
  std::vector<double> pooled(kHidden, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < kHidden; ++j) pooled[j] += x[i * kHidden + j] / n;
  }
  double norm = 0;
  for (double f : pooled) norm += f * f;
  for (double& f : pooled) f /= std::sqrt(norm);
  return pooled;
}

void ExpectMatches(const Embedder& e, const Tensors& t, const std::string& text, double tol) {
  const auto ids = e.Encode(text);
  auto got = e.EmbedOne(text);
  ASSERT_TRUE(got.ok());
  const auto want = Reference(t, ids);
  ASSERT_EQ(got->size(), want.size());
  for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR((*got)[j], want[j], tol) << text << " [" << j << "]";
}

TEST(BertTinyTest, MatchesReferenceWithPrefixAndTruncation) {
  ragd::testing::TempDir dir;
  const Tensors t = RandomWeights(11);
  WriteModel(dir.path(), t, "bert.", /*f16=*/false);
  auto e = Embedder::Load(dir.path());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->dimension(), kHidden);
  EXPECT_EQ((*e)->max_tokens(), 10u);
  EXPECT_EQ((*e)->Encode("the cats sat"), (std::vector<int32_t>{2, 7, 8, 12, 9, 3}));
  ExpectMatches(**e, t, "Hello, world!", 1e-4);
  ExpectMatches(**e, t, "the cat sat on the mat", 1e-4);
  ExpectMatches(**e, t, "the cat sat on the mat , the cat sat on a mat !", 1e-4);  // cut to 10 ids
  EXPECT_EQ((*e)->Encode("the cat sat on the mat , the cat sat on a mat !").size(), 10u);
}

TEST(BertTinyTest, F16WeightsAreConverted) {
  ragd::testing::TempDir dir;
  Tensors t = RandomWeights(12);
  WriteModel(dir.path(), t, "", /*f16=*/true);
  auto e = Embedder::Load(dir.path());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ExpectMatches(**e, t, "hello the cat", 5e-3);  // reference uses the unrounded weights
}

TEST(BertTinyTest, BadModelsAreRefused) {
  {
    ragd::testing::TempDir dir;
    Tensors t = RandomWeights(13);
    t.erase("encoder.layer.1.output.dense.bias");
    WriteModel(dir.path(), t, "", false);
    auto e = Embedder::Load(dir.path());
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(e.status().message().find("encoder.layer.1.output.dense.bias"), std::string::npos);
  }
  {
    ragd::testing::TempDir dir;
    Tensors t = RandomWeights(14);
    t["embeddings.LayerNorm.bias"].first = {kHidden + 1};
    t["embeddings.LayerNorm.bias"].second.push_back(0.f);
    WriteModel(dir.path(), t, "", false);
    EXPECT_EQ(Embedder::Load(dir.path()).status().code(), StatusCode::kCorrupt);
  }
  {
    ragd::testing::TempDir dir;
    WriteModel(dir.path(), RandomWeights(15), "", false, "relu");
    EXPECT_EQ(Embedder::Load(dir.path()).status().code(), StatusCode::kUnsupported);
  }
  {
    ragd::testing::TempDir dir;
    WriteModel(dir.path(), RandomWeights(16), "", false);
    std::ofstream(dir.path() + "/model.safetensors", std::ios::binary | std::ios::trunc) << "\x10\0\0";
    EXPECT_FALSE(Embedder::Load(dir.path()).ok());
  }
}

}  // namespace
}  // namespace ragd::retrieval
