// Qwen3 (GGUF architecture "qwen3"): the Llama-family block with an RMS norm
// on each query and key head before the rotary embedding (NEOX), no q/k/v
// biases, and a head width of its own (qwen3.attention.key_length, which
// need not be n_embd / n_head).
#include "inference/models/architectures.h"
#include "inference/models/llama_family.h"

namespace ragd::inference {

Result<std::unique_ptr<Model>> LoadQwen3(const GgufFile& file, const ModelOptions& options) {
  return LoadLlamaFamily(
      file, options,
      {.arch = "qwen3", .qkv_bias = Presence::kAbsent, .qk_norm = Presence::kRequired, .rope_neox = true});
}

}  // namespace ragd::inference
