// Black-box tests of the ragd command line: help, usage errors, model-info on
// the real models and on damaged copies of them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace ragd {
namespace {

using testing::ModelsDir;
using testing::RagdBinary;
using testing::RunProcess;

std::string GemmaPath() { return ModelsDir() + "/gemma-3-270m-q4_k_m.gguf"; }

std::string TempPath(const std::string& name) {
  // One folder per test process, removed when it exits.
  static const ragd::testing::TempDir dir;
  return dir.File(name);
}

// Writes the first `n` bytes of `src` to a temp file, optionally patching one byte.
std::string CopyPrefix(const std::string& src, size_t n, const std::string& name, long patch_at = -1,
                       char patch = 0) {
  std::ifstream in(src, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<size_t>(in.gcount()));
  if (patch_at >= 0) bytes[static_cast<size_t>(patch_at)] = patch;
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

size_t FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return static_cast<size_t>(in.tellg());
}

TEST(CliTest, HelpAndUsageErrors) {
  auto help = RunProcess({RagdBinary(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("serve"), std::string::npos);
  EXPECT_NE(help.out.find("model-info"), std::string::npos);

  auto serve_help = RunProcess({RagdBinary(), "serve", "--help"});
  EXPECT_EQ(serve_help.exit_code, 0);
  EXPECT_NE(serve_help.out.find("--port"), std::string::npos);

  auto unknown = RunProcess({RagdBinary(), "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command"), std::string::npos);

  auto bad_flag = RunProcess({RagdBinary(), "serve", "--prot", "1"});
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_NE(bad_flag.err.find("--prot"), std::string::npos);

  auto bad_config = RunProcess({RagdBinary(), "serve", "--set", "server.threads=zero"});
  EXPECT_EQ(bad_config.exit_code, 2);
  EXPECT_NE(bad_config.err.find("server.threads"), std::string::npos);
}

TEST(CliTest, ModelInfoOnRealGemma) {
  auto r = RunProcess({RagdBinary(), "model-info", GemmaPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("architecture:    gemma3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blocks:          18"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("embedding:       640"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vocabulary:      262144"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Q4_K"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Q8_0"), std::string::npos) << r.out;
}

TEST(CliTest, ModelInfoOnRealMiniLm) {
  auto r = RunProcess({RagdBinary(), "model-info", ModelsDir() + "/all-MiniLM-L6-v2/model.safetensors"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("BertModel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("embedding:       384"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blocks:          6"), std::string::npos) << r.out;
  // Debian 12's OpenBLAS gives CPUs newer than itself its generic SSE3
  // kernels; ragd restarts itself with ones the CPU can run
  // (retrieval/blas_core.h), whichever OpenBLAS would have chosen otherwise.
  EXPECT_NE(r.out.find("products:        OpenBLAS, "), std::string::npos) << r.out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_EQ(r.out.find("products:        OpenBLAS, Prescott kernels"), std::string::npos) << r.out;
  }
}

// Each damaged copy gives exit code 1 and exactly one line on stderr.
void ExpectOneLineError(const std::string& path, const std::string& fragment) {
  auto r = RunProcess({RagdBinary(), "model-info", path});
  EXPECT_EQ(r.exit_code, 1) << path << "\n" << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(CliTest, ModelInfoRejectsDamagedGguf) {
  const std::string real = GemmaPath();
  const size_t size = FileSize(real);
  ASSERT_GT(size, 100u << 20) << "real model missing: run scripts/fetch-models";
  ExpectOneLineError(CopyPrefix(real, 16, "header.gguf"), "truncated");
  ExpectOneLineError(CopyPrefix(real, 3, "tiny.gguf"), "GGUF");
  ExpectOneLineError(CopyPrefix(real, 1 << 20, "meta.gguf"), "truncated");
  ExpectOneLineError(CopyPrefix(real, 64, "magic.gguf", 0, 'X'), "magic");
  // The header and tables intact, the tensor data cut short.
  ExpectOneLineError(CopyPrefix(real, size - 4096, "data.gguf"), "past the end");
}

TEST(CliTest, ModelInfoRejectsDamagedSafetensors) {
  const std::string real = ModelsDir() + "/all-MiniLM-L6-v2/model.safetensors";
  ExpectOneLineError(CopyPrefix(real, 4, "short.safetensors"), "too short");
  ExpectOneLineError(CopyPrefix(real, 4096, "cut.safetensors"), "header");
  ExpectOneLineError(CopyPrefix(real, FileSize(real) - 100, "data.safetensors"), "past the end");
  ExpectOneLineError(CopyPrefix(real, FileSize(real), "json.safetensors", 8, '!'), "JSON");
}

}  // namespace
}  // namespace ragd
