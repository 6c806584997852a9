// The Llama-family forward pass (llama, qwen2, qwen3) on tiny random-weight
// models: logits against an independent double-precision reference and
// against llama.cpp's own logits for the same files
// (tests/data/tiny_llama_family_golden.json, scripts/make-tiny-golden),
// prefill in chunks against one token at a time, sequences batched in one
// step against alone, files llama.cpp reads its own way (computed as it does
// or refused), and load errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <tuple>

#include "corpus/sha256.h"
#include "inference/gguf.h"
#include "inference/models/model.h"
#include "tests/inference/model/run_chunked.h"
#include "tests/inference/model/tiny_llama_family.h"
#include "tests/support/golden.h"

namespace ragd::testing {
// Test parameters print as their variant's name.
void PrintTo(const TinyLlamaSpec& spec, std::ostream* os) { *os << spec.name; }
}  // namespace ragd::testing

namespace ragd::inference {
namespace {

using testing_model::MaxAbsDiff;
using testing_model::RunChunked;

using testing::TinyLlamaSpec;
using testing::TinyLlamaWeights;
using testing_model::Logits;

std::string TempPath(const std::string& tag) {
  return "/tmp/ragd_tiny_llama_" + std::to_string(getpid()) + "_" + tag + ".gguf";
}

std::vector<int32_t> RandomTokens(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& v : t) v = static_cast<int32_t>(rng() % testing::kTinyLlamaVocab);
  return t;
}

// A written, opened and loaded tiny model (the file is removed at once; it
// stays mapped).
struct Tiny {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Model> model;
  testing::TinyLlamaModelWeights weights;
  Status status;  // the load's
};

Tiny Open(const TinyLlamaSpec& spec, bool f16_attention, const std::string& skip = "",
          const std::string& bad_shape = "", int64_t truncate_to = -1) {
  Tiny t;
  const std::string path = TempPath(spec.name + (f16_attention ? "_16" : "_32"));
  t.weights = testing::WriteTinyLlama(spec, path, skip, bad_shape);
  if (truncate_to >= 0) std::filesystem::resize_file(path, truncate_to);
  auto f = GgufFile::Open(path);
  std::remove(path.c_str());
  if (!f.ok()) {
    t.status = f.status();
    return t;
  }
  t.file = std::make_unique<GgufFile>(std::move(f).value());
  ModelOptions options;
  options.f16_attention = f16_attention;
  auto m = LoadModel(*t.file, options);
  t.status = m.status();
  if (m.ok()) t.model = std::move(m).value();
  return t;
}

// Largest |got - want| and largest |want| over all positions.
template <typename Row>
std::pair<double, double> Compare(const Logits& got, const std::vector<Row>& want) {
  double worst = 0, scale = 0;
  for (size_t t = 0; t < want.size(); ++t) {
    for (size_t i = 0; i < want[t].size(); ++i) {
      worst = std::max(worst, std::fabs(got[t][i] - double(want[t][i])));
      scale = std::max(scale, std::fabs(double(want[t][i])));
    }
  }
  return {worst, scale};
}

bool Quantized(const TinyLlamaSpec& spec) {
  return spec.weights == TinyLlamaWeights::kMixed || spec.weights == TinyLlamaWeights::kKQuants;
}

// Against the double reference, as a fraction of the largest logit. F32
// weights with a float cache: float rounding only (measured up to 2.4e-7).
// Half-precision attention rounds q, k, v and the attention weights to halves
// as llama.cpp's F16 cache does (3.5e-4). F16 weights: the halves are exact,
// the products sum in float. Quantized weights: the products quantize their
// activations to 8 bits (llama.cpp's Q8_0 / Q8_K), which the reference does
// not (measured up to 1.8% with the small logits of the untied variants).
double ReferenceTolerance(const TinyLlamaSpec& spec, bool f16_attention) {
  if (Quantized(spec)) return 4e-2;
  return f16_attention ? 2e-3 : 1e-5;
}

std::string VariantName(const TinyLlamaSpec& s, bool f16) { return s.name + (f16 ? "_f16" : "_f32"); }

// (variant, attention in half precision)
class TinyLlamaFamilyTest : public ::testing::TestWithParam<std::tuple<TinyLlamaSpec, bool>> {
 protected:
  const TinyLlamaSpec& spec() const { return std::get<0>(GetParam()); }
  bool f16() const { return std::get<1>(GetParam()); }
};

TEST_P(TinyLlamaFamilyTest, LogitsMatchReference) {
  Tiny t = Open(spec(), f16());
  ASSERT_NE(t.model, nullptr) << t.status.ToString();
  const ModelConfig& c = t.model->config();
  EXPECT_EQ(c.architecture, spec().arch);
  EXPECT_EQ(c.n_vocab, testing::kTinyLlamaVocab);
  EXPECT_EQ(c.head_dim, spec().head_dim);
  EXPECT_EQ(c.n_head_kv, spec().n_head_kv);
  const auto tokens = RandomTokens(20, 7);
  const auto ref = testing::TinyLlamaReference(spec(), t.weights, tokens);
  ThreadPool pool(2);
  const Logits got = RunChunked(*t.model, tokens, {20}, &pool);
  ASSERT_EQ(got.size(), tokens.size());
  const auto [worst, scale] = Compare(got, ref);
  std::printf("%s: max |logit - reference| = %.3g (%.2g of max |logit| %.3g)\n",
              VariantName(spec(), f16()).c_str(), worst, worst / scale, scale);
  EXPECT_LT(worst, ReferenceTolerance(spec(), f16()) * scale);
  EXPECT_GT(scale, 1.0);  // the comparison is not vacuous
}

TEST_P(TinyLlamaFamilyTest, ChunkedPrefillAndDecodeAgreeWithPrefill) {
  Tiny t = Open(spec(), f16());
  ASSERT_NE(t.model, nullptr) << t.status.ToString();
  const auto tokens = RandomTokens(23, 11);
  ThreadPool pool(2);
  const Logits whole = RunChunked(*t.model, tokens, {23}, &pool);
  const Logits one_by_one = RunChunked(*t.model, tokens, {1}, nullptr);
  const Logits chunked = RunChunked(*t.model, tokens, {7, 1, 3, 6}, &pool);
  ASSERT_EQ(one_by_one.size(), tokens.size());
  ASSERT_EQ(chunked.size(), tokens.size());
  // Products of different row counts may sum in other orders; 8-bit
  // activations and half rounding can turn such last-bit differences into
  // a rounding step.
  const double tol = Quantized(spec()) || f16() ? 2e-2 : 1e-4;
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_LT(MaxAbsDiff(whole[i], one_by_one[i]), tol) << "position " << i;
    EXPECT_LT(MaxAbsDiff(whole[i], chunked[i]), tol) << "position " << i;
  }
}

TEST_P(TinyLlamaFamilyTest, BatchedSequencesMatchSeparateRuns) {
  Tiny t = Open(spec(), f16());
  ASSERT_NE(t.model, nullptr) << t.status.ToString();
  Model& m = *t.model;
  // Three sequences: prefills of different lengths in one step, then
  // decode steps of all three together.
  const std::vector<std::vector<int32_t>> seqs = {RandomTokens(9, 21), RandomTokens(6, 22),
                                                  RandomTokens(7, 23)};
  const int prefill[3] = {5, 2, 4};
  std::vector<Logits> alone;
  for (int s = 0; s < 3; ++s) alone.push_back(RunChunked(m, seqs[s], {prefill[s], 1}, nullptr));
  ThreadPool pool(2);
  std::vector<std::unique_ptr<KvCache>> caches;
  for (const auto& s : seqs) caches.push_back(m.NewCache(static_cast<int64_t>(s.size())));
  std::vector<float> logits[3];
  const double tol = Quantized(spec()) || f16() ? 2e-2 : 1e-4;
  for (int step = 0; step < 5; ++step) {
    std::vector<SequenceStep> steps;
    std::vector<int> which;
    for (int s = 0; s < 3; ++s) {
      const int64_t pos = caches[s]->n_past();
      const int64_t n = step == 0 ? prefill[s] : 1;
      if (pos + n > static_cast<int64_t>(seqs[s].size())) continue;
      steps.push_back(
          {caches[s].get(), std::span<const int32_t>(seqs[s].data() + pos, n), false, &logits[s]});
      which.push_back(s);
    }
    ASSERT_TRUE(m.Forward(steps, &pool).ok());
    for (size_t i = 0; i < which.size(); ++i) {
      const int s = which[i];
      EXPECT_LT(MaxAbsDiff(logits[s], alone[s][caches[s]->n_past() - 1]), tol)
          << "sequence " << s << " position " << caches[s]->n_past() - 1;
    }
  }
}

std::vector<std::tuple<TinyLlamaSpec, bool>> Params(const std::vector<TinyLlamaSpec>& variants) {
  std::vector<std::tuple<TinyLlamaSpec, bool>> p;
  for (const TinyLlamaSpec& s : variants) {
    for (bool f16 : {false, true}) p.emplace_back(s, f16);
  }
  return p;
}
std::string ParamName(const ::testing::TestParamInfo<std::tuple<TinyLlamaSpec, bool>>& info) {
  return VariantName(std::get<0>(info.param), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Variants, TinyLlamaFamilyTest,
                         ::testing::ValuesIn(Params(testing::TinyLlamaVariants())), ParamName);

// Files llama.cpp reads in a way of its own (tiny_llama_family.h): the
// engine computes what llama.cpp computes, or refuses the file with an error
// naming what it does not support. It must not compute something else.
class TinyLlamaEdgeTest : public ::testing::TestWithParam<TinyLlamaSpec> {};

TEST_P(TinyLlamaEdgeTest, MatchesReferenceOrRefuses) {
  Tiny t = Open(GetParam(), false);
  if (t.model == nullptr) {
    std::printf("%s: refused: %s\n", GetParam().name.c_str(), t.status.ToString().c_str());
    EXPECT_EQ(t.status.code(), StatusCode::kUnsupported) << t.status.ToString();
    return;
  }
  const auto tokens = RandomTokens(12, 5);
  const auto ref = testing::TinyLlamaReference(GetParam(), t.weights, tokens);
  const auto [worst, scale] = Compare(RunChunked(*t.model, tokens, {12}, nullptr), ref);
  std::printf("%s: max |logit - reference| = %.3g of max |logit| %.3g\n", GetParam().name.c_str(), worst,
              scale);
  EXPECT_LT(worst, ReferenceTolerance(GetParam(), false) * scale);
}

INSTANTIATE_TEST_SUITE_P(EdgeCases, TinyLlamaEdgeTest, ::testing::ValuesIn(testing::TinyLlamaEdgeVariants()),
                         [](const auto& info) { return info.param.name; });

// llama.cpp 0.3.36 (llama-cpp-python) on the same files: token by token,
// F16 KV cache, no flash attention. The file's sha256 is checked first, so
// that a change to the writer is not mistaken for one in the engine.
class LlamaCppGoldenTest : public ::testing::TestWithParam<std::tuple<TinyLlamaSpec, bool>> {};

// The golden file's entry for a variant; null when it has none.
const nlohmann::json* GoldenEntry(const std::string& name) {
  static const nlohmann::json golden = testing::LoadGolden("tiny_llama_family_golden.json");
  if (!golden.contains("models")) return nullptr;
  for (const auto& m : golden.at("models")) {
    if (m.value("name", "") == name) return &m;
  }
  return nullptr;
}

// Against llama.cpp, as a fraction of the largest logit. Half-precision
// attention follows llama.cpp's F16 cache and its one-token summation order.
// K-quant, Q5_0 and Q8_0 products follow its order too (measured up to
// 2.4e-7). Q4_0 products sum in the Q5_0 order where llama.cpp repacks Q4_0
// (kernels.h MatMul): last-bit differences that now and then flip an 8-bit
// activation rounding downstream (measured 4e-3 with the mixed weights). F32
// products sum in another order (3.6e-5). F16 products keep float
// activations where llama.cpp rounds them to halves (3.5e-4). A float cache
// differs by the halves' rounding, which 8-bit activations amplify.
double GoldenTolerance(const TinyLlamaSpec& spec, bool f16_attention) {
  if (!f16_attention) return Quantized(spec) ? 5e-2 : 2e-3;
  switch (spec.weights) {
    case TinyLlamaWeights::kKQuants:
      return 1e-5;
    case TinyLlamaWeights::kMixed:
      return 1e-2;
    case TinyLlamaWeights::kF16:
      return 2e-3;
    case TinyLlamaWeights::kF32:
      break;
  }
  return 2e-4;
}

std::string FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return corpus::Sha256Hex(bytes);
}

TEST_P(LlamaCppGoldenTest, LogitsMatchLlamaCpp) {
  const auto& [spec, f16] = GetParam();
  const nlohmann::json* entry = GoldenEntry(spec.name);
  ASSERT_NE(entry, nullptr) << "no golden entry for " << spec.name << " (run scripts/make-tiny-golden)";
  const std::string path = TempPath("golden_" + spec.name);
  testing::WriteTinyLlama(spec, path);
  const std::string sha = FileSha256(path);
  std::remove(path.c_str());
  ASSERT_EQ(sha, entry->at("file_sha256").get<std::string>())
      << spec.name << ": the writer's bytes changed; rerun scripts/make-tiny-golden";

  Tiny t = Open(spec, f16);
  if (t.model == nullptr) {  // only an edge variant may be refused
    EXPECT_EQ(t.status.code(), StatusCode::kUnsupported) << t.status.ToString();
    for (const TinyLlamaSpec& s : testing::TinyLlamaVariants())
      EXPECT_NE(s.name, spec.name) << t.status.ToString();
    return;
  }
  const auto tokens = entry->at("prompt_ids").get<std::vector<int32_t>>();
  ThreadPool pool(2);
  const Logits got = RunChunked(*t.model, tokens, {static_cast<int>(tokens.size())}, &pool);
  ASSERT_EQ(got.size(), tokens.size());
  // Every position's top logits, and the last position's whole row.
  double worst = 0, scale = 0;
  const auto& top = entry->at("top");
  ASSERT_EQ(top.size(), tokens.size());
  for (size_t p = 0; p < tokens.size(); ++p) {
    for (const auto& pair : top[p]) {
      const double want = pair[1].get<double>();
      worst = std::max(worst, std::fabs(got[p][pair[0].get<int>()] - want));
      scale = std::max(scale, std::fabs(want));
    }
  }
  const auto last = entry->at("last_row").get<std::vector<double>>();
  ASSERT_EQ(last.size(), got.back().size());
  for (size_t i = 0; i < last.size(); ++i) {
    worst = std::max(worst, std::fabs(got.back()[i] - last[i]));
    scale = std::max(scale, std::fabs(last[i]));
  }
  std::printf("%s: max |logit - llama.cpp| = %.3g (%.2g of max |logit| %.3g)\n",
              VariantName(spec, f16).c_str(), worst, worst / scale, scale);
  EXPECT_LT(worst, GoldenTolerance(spec, f16) * scale);
}

std::vector<std::tuple<TinyLlamaSpec, bool>> AllParams() {
  auto p = Params(testing::TinyLlamaVariants());
  for (const auto& e : Params(testing::TinyLlamaEdgeVariants())) p.push_back(e);
  return p;
}

INSTANTIATE_TEST_SUITE_P(Variants, LlamaCppGoldenTest, ::testing::ValuesIn(AllParams()), ParamName);

// Load errors: what is wrong with the file, as a value naming it.
struct LoadErrorCase {
  std::string label;
  std::string variant;    // from TinyLlamaVariants()
  std::string skip;       // tensor left out
  std::string bad_shape;  // tensor with one extra row
  std::string arch;       // replaces the variant's architecture
  std::string rope_scaling;
  bool qkv_bias = false;            // adds q/k/v biases
  int64_t truncate_to = -1;         // cuts the file to this many bytes
  std::vector<std::string> expect;  // substrings of the message
};

class LoadErrorTest : public ::testing::TestWithParam<LoadErrorCase> {};

TEST_P(LoadErrorTest, NamesTheProblem) {
  const LoadErrorCase& c = GetParam();
  TinyLlamaSpec spec = testing::FindTinyLlamaVariant(c.variant);
  ASSERT_EQ(spec.name, c.variant);
  if (!c.arch.empty()) spec.arch = c.arch;
  if (!c.rope_scaling.empty()) spec.rope_scaling_type = c.rope_scaling;
  spec.qkv_bias |= c.qkv_bias;
  Tiny t = Open(spec, true, c.skip, c.bad_shape, c.truncate_to);
  ASSERT_EQ(t.model, nullptr);
  EXPECT_FALSE(t.status.ok());
  for (const std::string& s : c.expect)
    EXPECT_NE(t.status.message().find(s), std::string::npos) << t.status.message();
}

INSTANTIATE_TEST_SUITE_P(
    Files, LoadErrorTest,
    ::testing::Values(
        LoadErrorCase{.label = "missing_ffn_down",
                      .variant = "llama_f32",
                      .skip = "blk.1.ffn_down.weight",
                      .expect = {"blk.1.ffn_down.weight", "missing"}},
        LoadErrorCase{.label = "missing_token_embd",
                      .variant = "llama_f32",
                      .skip = "token_embd.weight",
                      .expect = {"token_embd.weight", "missing"}},
        LoadErrorCase{.label = "missing_output_norm",
                      .variant = "qwen3_f32",
                      .skip = "output_norm.weight",
                      .expect = {"output_norm.weight", "missing"}},
        LoadErrorCase{.label = "missing_qwen2_bias",
                      .variant = "qwen2_f32",
                      .skip = "blk.1.attn_k.bias",
                      .expect = {"blk.1.attn_k.bias", "missing"}},
        LoadErrorCase{.label = "missing_qwen3_k_norm",
                      .variant = "qwen3_mixed",
                      .skip = "blk.0.attn_k_norm.weight",
                      .expect = {"blk.0.attn_k_norm.weight", "missing"}},
        LoadErrorCase{.label = "shape_q_bias",
                      .variant = "qwen2_f32",
                      .bad_shape = "blk.0.attn_q.bias",
                      .expect = {"blk.0.attn_q.bias", "shape"}},
        LoadErrorCase{.label = "shape_q_norm",
                      .variant = "qwen3_f32",
                      .bad_shape = "blk.1.attn_q_norm.weight",
                      .expect = {"blk.1.attn_q_norm.weight", "shape"}},
        LoadErrorCase{.label = "shape_output",
                      .variant = "qwen2_kquant",
                      .bad_shape = "output.weight",
                      .expect = {"output.weight", "shape"}},
        LoadErrorCase{.label = "shape_rope_freqs",
                      .variant = "llama_mixed",
                      .bad_shape = "rope_freqs.weight",
                      .expect = {"rope_freqs.weight", "shape"}},
        LoadErrorCase{.label = "shape_attn_output",
                      .variant = "llama_mixed",
                      .bad_shape = "blk.1.attn_output.weight",
                      .expect = {"blk.1.attn_output.weight", "shape"}},
        LoadErrorCase{.label = "qwen3_with_bias",
                      .variant = "qwen3_f32",
                      .qkv_bias = true,
                      .expect = {"blk.0.attn_q.bias", "qwen3"}},
        LoadErrorCase{
            .label = "unsupported_arch", .variant = "llama_f32", .arch = "mamba", .expect = {"mamba"}},
        LoadErrorCase{.label = "yarn", .variant = "qwen2_f32", .rope_scaling = "yarn", .expect = {"yarn"}},
        LoadErrorCase{.label = "truncated", .variant = "qwen3_f32", .truncate_to = 100000, .expect = {}}),
    [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace ragd::inference
