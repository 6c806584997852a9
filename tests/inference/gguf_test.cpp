// GGUF parsing and validation: every malformed file is an error value.
#include "inference/gguf.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>

#include "tests/support/gguf_writer.h"
#include "tests/support/temp_dir.h"

namespace ragd::inference {
namespace {

class GgufTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) {
    static const ragd::testing::TempDir dir;  // removed when the test process exits
    return dir.File(name);
  }
  std::string WriteBytes(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string p = Path(name);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return p;
  }
  static testing::GgufWriter SmallModel() {
    testing::GgufWriter w;
    w.AddString("general.architecture", "gemma3");
    w.AddU32("gemma3.block_count", 2);
    w.AddF32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    w.AddStringArray("tokenizer.ggml.tokens", {"<pad>", "<eos>", "<bos>", "a"});
    w.AddF32Array("tokenizer.ggml.scores", {0, 0, 0, -1});
    w.AddF32Tensor("output_norm.weight", {8}, std::vector<float>(8, 1.0f));
    w.AddTensor("token_embd.weight", {32, 4}, 8, std::vector<uint8_t>(34 * 4, 0));  // Q8_0
    return w;
  }
};

TEST_F(GgufTest, ParsesMetadataAndTensors) {
  auto f = GgufFile::Open(WriteBytes("ok.gguf", SmallModel().Bytes()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->architecture(), "gemma3");
  EXPECT_EQ(f->GetInt("gemma3.block_count"), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(*f->GetFloat("gemma3.attention.layer_norm_rms_epsilon")), 1e-6f);
  EXPECT_EQ(f->Find("tokenizer.ggml.tokens")->strings.size(), 4u);
  EXPECT_EQ(f->Find("tokenizer.ggml.scores")->numbers[3], -1);
  const GgufTensor* t = f->FindTensor("token_embd.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, GgmlType::kQ8_0);
  EXPECT_EQ(t->ne[0], 32u);
  EXPECT_EQ(t->ne[1], 4u);
  EXPECT_EQ(t->n_bytes, 34u * 4);
  EXPECT_EQ(f->FindTensor("output_norm.weight")->n_bytes, 32u);
  EXPECT_FALSE(f->GetString("gemma3.block_count").has_value());  // wrong type is absent, not a crash
}

TEST_F(GgufTest, WrongMagicIsCorrupt) {
  auto bytes = SmallModel().Bytes();
  bytes[0] = 'X';
  auto f = GgufFile::Open(WriteBytes("magic.gguf", bytes));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(f.status().message().find("magic"), std::string::npos);
}

TEST_F(GgufTest, EveryTruncationIsAnErrorNotACrash) {
  const auto bytes = SmallModel().Bytes();
  // Cut the file at every length short of complete: header, metadata, tensor table, data.
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    auto f = GgufFile::Open(WriteBytes("cut.gguf", cut));
    EXPECT_FALSE(f.ok()) << "accepted a file cut at " << n << " of " << bytes.size();
  }
}

TEST_F(GgufTest, TensorPastEndOfFile) {
  testing::GgufWriter w;
  w.AddString("general.architecture", "gemma3");
  w.AddF32Tensor("a.weight", {8}, std::vector<float>(8, 1.0f));
  auto bytes = w.Bytes();
  bytes.resize(bytes.size() - 4);  // data of the last tensor cut short
  auto f = GgufFile::Open(WriteBytes("past.gguf", bytes));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("past the end"), std::string::npos) << f.status().message();
}

TEST_F(GgufTest, RandomCorruptionNeverCrashes) {
  const auto good = SmallModel().Bytes();
  uint32_t seed = 12345;
  for (int trial = 0; trial < 500; ++trial) {
    auto bytes = good;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      bytes[seed % bytes.size()] = static_cast<uint8_t>(seed >> 24);
    }
    auto f = GgufFile::Open(WriteBytes("rand.gguf", bytes));
    if (f.ok()) {
      // Whatever was accepted must be readable end to end.
      unsigned sum = 0;
      for (const GgufTensor& t : f->tensors())
        for (size_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
      EXPECT_GE(sum, 0u);
    }
  }
}

TEST_F(GgufTest, UnsupportedTensorTypeNamesTheTensor) {
  testing::GgufWriter w;
  w.AddString("general.architecture", "gemma3");
  w.AddTensor("blk.0.attn_q.weight", {256, 1}, 10, std::vector<uint8_t>(84, 0));  // Q2_K
  const std::string p = WriteBytes("q2k.gguf", w.Bytes());
  auto f = GgufFile::Open(p);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(f.status().message().find("blk.0.attn_q.weight"), std::string::npos);
  EXPECT_NE(f.status().message().find("Q2_K"), std::string::npos);
  GgufOpenOptions describe_only;
  describe_only.require_supported_types = false;
  EXPECT_TRUE(GgufFile::Open(p, describe_only).ok());
}

// Resident KiB of this process's mappings of the file `path` (/proc/self/smaps
// names it by its canonical path: compared by file name).
long ResidentKib(const std::string& path) {
  const std::string name = path.substr(path.rfind('/'));
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  long kib = 0;
  while (std::getline(in, line)) {
    if (line.find(" /") != std::string::npos && line.find('-') < 16) {
      in_file = line.size() >= name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0;
    } else if (in_file && line.rfind("Rss:", 0) == 0) {
      kib += std::atol(line.c_str() + 4);
    }
  }
  return kib;
}

TEST_F(GgufTest, ReleaseMetadataDropsHeaderPagesAndKeepsTensors) {
  // A vocabulary of ~600 KiB ahead of the tensor data.
  testing::GgufWriter w = SmallModel();
  std::vector<std::string> tokens;
  for (int i = 0; i < 20000; ++i) tokens.push_back("token_number_" + std::to_string(i) + "_padding");
  w.AddStringArray("tokenizer.ggml.merges", tokens);
  std::vector<float> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  w.AddF32Tensor("blk.0.ffn_norm.weight", {4096}, values);
  const std::string p = WriteBytes("release.gguf", w.Bytes());
  auto f = GgufFile::Open(p);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const long before = ResidentKib(p);
  f->ReleaseMetadata();
  const long after = ResidentKib(p);
  EXPECT_LE(after, before - 400) << "header pages still resident: " << before << " KiB -> " << after
                                 << " KiB";
  // Scalars and array sizes stay; tensor data reads back unchanged.
  EXPECT_EQ(f->GetInt("gemma3.block_count"), 2);
  EXPECT_EQ(f->Find("tokenizer.ggml.merges")->array_size, 20000u);
  EXPECT_TRUE(f->Find("tokenizer.ggml.merges")->strings.empty());
  const GgufTensor* t = f->FindTensor("blk.0.ffn_norm.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(std::memcmp(t->data, values.data(), values.size() * sizeof(float)), 0);
}

// Found by tests/fuzz (gguf): a u64 key of 2^63 or more made GetInt convert
// a double outside int64's range (undefined behaviour; INT64_MIN in practice,
// so a context length or token id read as a huge negative number).
TEST_F(GgufTest, IntegerBeyondInt64IsNoInteger) {
  // The crashing input: GGUF v3, no tensors, one key llama.context_length = u64 2^63.
  static const char kInput[] =
      "GGUF\3\0\0\0"                           // magic, version 3
      "\0\0\0\0\0\0\0\0"                       // no tensors
      "\1\0\0\0\0\0\0\0"                       // one key
      "\24\0\0\0\0\0\0\0llama.context_length"  // its name (20 bytes)
      "\12\0\0\0"                              // type u64
      "\0\0\0\0\0\0\0\x80";                    // 2^63
  const std::vector<uint8_t> bytes(kInput, kInput + sizeof(kInput) - 1);
  auto f = GgufFile::Open(WriteBytes("u64_2p63.gguf", bytes));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->GetInt("llama.context_length"), std::nullopt);
  EXPECT_EQ(f->GetFloat("llama.context_length"), 0x1p63);
}

// Found by tests/fuzz (gguf, as a 10 s "slow unit"): a 218-byte file whose
// header claims 16,318,460 tensors made Open allocate the tensor table first,
// 2 GiB, before reading that it was truncated. Reduced here to the header.
TEST_F(GgufTest, TensorCountBeyondTheFileAllocatesNothing) {
  static const char kInput[] =
      "GGUF\3\0\0\0"            // magic, version 3
      "\xfc\xff\xf8\0\0\0\0\0"  // 16,318,460 tensors (under the 2^24 sanity bound)
      "\0\0\0\0\0\0\0\0";       // no keys, and nothing after
  const std::vector<uint8_t> bytes(kInput, kInput + sizeof(kInput) - 1);
  const std::string path = WriteBytes("many_tensors.gguf", bytes);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  auto f = GgufFile::Open(path);
  getrusage(RUSAGE_SELF, &after);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorrupt);
  // The peak resident size (KiB) grew by 2 GiB before the fix.
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024);
}

TEST_F(GgufTest, MissingFileIsNotFound) {
  auto f = GgufFile::Open(Path("does-not-exist.gguf"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ragd::inference
