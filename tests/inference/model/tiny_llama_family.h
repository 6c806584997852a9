// Tiny random-weight Llama / Qwen2 / Qwen3 models for tests: written as GGUF
// files with tests/support/gguf_writer.h, plus a plain double-precision
// reference forward pass over the same (decoded) weights, written from the
// models' math as llama.cpp defines it, independently of the engine's code.
//
// The files also carry a small SentencePiece-style vocabulary ("<unk>", "<s>",
// "</s>", the 256 byte pieces, fillers) so that llama.cpp loads them too:
// scripts/make-tiny-golden runs llama.cpp on the variants below and stores its
// logits in tests/data/tiny_llama_family_golden.json.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ragd::testing {

// How the matrices are stored.
enum class TinyLlamaWeights {
  kF32,     // every matrix F32
  kF16,     // every matrix F16
  kMixed,   // token_embd/q/gate/output Q8_0, k/v/down Q4_0, o/up Q5_0
  kKQuants  // as a Q4_K_M file: token_embd/v/down/output Q6_K, the rest Q4_K (widths % 256 == 0)
};

struct TinyLlamaSpec {
  std::string name = "llama";  // the variant's label: test name, file name, golden entry
  std::string arch = "llama";  // general.architecture (any string: the metadata keys follow it)
  int n_embd = 64;
  int n_layer = 2;
  int n_ff = 96;
  int n_head = 4;
  int n_head_kv = 2;
  int head_dim = 16;  // attention.key_length / value_length, written when != n_embd / n_head
  int context_length = 64;
  float rms_eps = 1e-5f;
  float rope_base = 10000.f;
  bool rope_dimension_count = false;  // writes rope.dimension_count = head_dim (Llama converters do)
  std::string rope_scaling_type;      // rope.scaling.type; empty: not written
  float rope_scaling_factor = 0.f;    // rope.scaling.factor; 0: not written
  bool rope_freqs = false;            // rope_freqs.weight: per-pair divisors of the angle (Llama 3)
  bool qkv_bias = false;              // attn_{q,k,v}.bias
  bool out_bias = false;              // attn_output.bias
  bool ffn_bias = false;              // ffn_{gate,up,down}.bias (llama.cpp reads them for llama)
  bool qk_norm = false;               // attn_{q,k}_norm.weight, one RMS norm per head (Qwen3)
  bool tied_output = true;            // no output.weight: the logits use token_embd
  bool neox_rope = true;              // rotate (i, i + d/2); false: (2i, 2i + 1) as llama
  TinyLlamaWeights weights = TinyLlamaWeights::kF32;
  uint32_t seed = 1;
};

// Rows of token_embd: the vocabulary's size (3 specials, 256 bytes, fillers).
inline constexpr int kTinyLlamaVocab = 288;

// The variants the engine supports, each with the rotary style of its
// architecture: llama (adjacent pairs, optional biases, rope_freqs, linear
// scaling), qwen2 (q/k/v biases), qwen3 (per-head q/k norms, head width
// other than n_embd / n_head); F32, F16, mixed and K-quant weights; tied and
// untied output.
std::vector<TinyLlamaSpec> TinyLlamaVariants();
// Files llama.cpp reads one way and the engine may read another: a linear
// rope.scaling.factor without rope.scaling.type (llama.cpp's default type is
// "linear"), and a llama file with feed-forward biases (llama.cpp adds them).
std::vector<TinyLlamaSpec> TinyLlamaEdgeVariants();
// The variant of either list with that name; the default spec when none.
TinyLlamaSpec FindTinyLlamaVariant(const std::string& name);

// Decoded weights as the reference sees them: row-major [n_out][n_in].
struct TinyLlamaModelWeights {
  std::map<std::string, std::vector<float>> t;
};

// Writes the GGUF file to `path` and returns the (decoded) weights. The same
// spec always gives the same bytes. `skip_tensor` leaves that tensor out;
// `bad_shape_tensor` writes it with one extra row (or value).
TinyLlamaModelWeights WriteTinyLlama(const TinyLlamaSpec& spec, const std::string& path,
                                     const std::string& skip_tensor = "",
                                     const std::string& bad_shape_tensor = "");

// Logits (kTinyLlamaVocab per position) for every position of `tokens`,
// causal attention from position 0, in double precision.
std::vector<std::vector<double>> TinyLlamaReference(const TinyLlamaSpec& spec, const TinyLlamaModelWeights& w,
                                                    const std::vector<int32_t>& tokens);

}  // namespace ragd::testing
