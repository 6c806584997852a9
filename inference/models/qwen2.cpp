// Qwen2 / Qwen2.5 (GGUF architecture "qwen2"): the Llama-family block with
// biases on the q, k and v projections and NEOX rotary embeddings; the output
// projection is its own matrix or tied to the token embedding.
#include "inference/models/architectures.h"
#include "inference/models/llama_family.h"

namespace ragd::inference {

Result<std::unique_ptr<Model>> LoadQwen2(const GgufFile& file, const ModelOptions& options) {
  return LoadLlamaFamily(
      file, options,
      {.arch = "qwen2", .qkv_bias = Presence::kRequired, .qk_norm = Presence::kAbsent, .rope_neox = true});
}

}  // namespace ragd::inference
