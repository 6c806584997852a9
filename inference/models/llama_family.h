// The block that Llama, Qwen2 and Qwen3 share, computed as llama.cpp does:
//   x = token_embd[tok]
//   per layer: h = norm(x)*attn_norm; q,k,v = W h (+ bias where the file has
//     one); Qwen3: per-head norm(q)*q_norm, norm(k)*k_norm; RoPE (NEOX for
//     Qwen, adjacent pairs for Llama); causal GQA attention, scale
//     1/sqrt(head_dim); x += W_o a (+ bias); h = norm(x)*ffn_norm;
//     x += W_down(silu(W_gate h) * W_up h)
//   logits = output . (norm(x)*output_norm)   (output tied to token_embd when absent)
// The architecture files (llama.cpp, qwen2.cpp, qwen3.cpp) say which of the
// optional pieces their files must, may or must not have.
#pragma once

#include <memory>
#include <string_view>

#include "common/status.h"
#include "inference/gguf.h"
#include "inference/models/model.h"

namespace ragd::inference {

enum class Presence { kAbsent, kOptional, kRequired };

struct LlamaFamilySpec {
  std::string_view arch;                    // GGUF general.architecture
  Presence qkv_bias = Presence::kOptional;  // attn_{q,k,v}.bias
  Presence qk_norm = Presence::kAbsent;     // attn_{q,k}_norm.weight, per head
  bool rope_neox = true;                    // false: LLAMA_ROPE_TYPE_NORM
};

Result<std::unique_ptr<Model>> LoadLlamaFamily(const GgufFile& file, const ModelOptions& options,
                                               const LlamaFamilySpec& spec);

}  // namespace ragd::inference
