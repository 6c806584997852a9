// A tiny random-weight Gemma 3 model for tests: written as a GGUF file with
// tests/support/gguf_writer.h, plus a plain double-precision reference forward
// pass over the same (dequantized) weights, written independently of the
// engine's code.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ragd::testing {

struct TinyGemmaSpec {
  int n_embd = 64;
  int n_layer = 6;  // layer 5 is global, 0-4 slide
  int n_ff = 96;
  int n_head = 8;  // GQA 4:1 as in Gemma 3 270M, with two kv heads
  int n_head_kv = 2;
  int head_dim = 16;
  int n_vocab = 80;
  int sliding_window = 4;
  int context_length = 64;
  float rope_base = 1e6f;
  // Type of the matrices: 0 all F32; 1 mixed (token_embd Q8_0, q/o F32,
  // k/v Q4_0, gate F16, up Q8_0, down Q4_0).
  int quant = 0;
  uint32_t seed = 1;
};

// Dequantized weights as the reference sees them: row-major [n_out][n_in].
struct TinyGemmaWeights {
  std::map<std::string, std::vector<float>> t;
};

// Writes the GGUF file to `path` and returns the (dequantized) weights.
// `skip_tensor` leaves that tensor out; `bad_shape_tensor` writes it with one
// extra row.
TinyGemmaWeights WriteTinyGemma(const TinyGemmaSpec& spec, const std::string& path,
                                const std::string& skip_tensor = "",
                                const std::string& bad_shape_tensor = "");

// Logits (n_vocab per position) for every position of `tokens`.
std::vector<std::vector<double>> ReferenceForward(const TinyGemmaSpec& spec, const TinyGemmaWeights& w,
                                                  const std::vector<int32_t>& tokens);

}  // namespace ragd::testing
