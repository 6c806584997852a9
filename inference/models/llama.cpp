// Llama 2 / 3.x, Mistral, SmolLM, TinyLlama (GGUF architecture "llama"): the
// Llama-family block, rotary embeddings on adjacent pairs (llama.cpp's
// LLAMA_ROPE_TYPE_NORM; the converter permuted q/k rows to match), Llama 3's
// per-pair frequency factors (rope_freqs.weight) when the file has them.
// Biases are optional, as llama.cpp loads them.
#include "inference/models/architectures.h"
#include "inference/models/llama_family.h"

namespace ragd::inference {

Result<std::unique_ptr<Model>> LoadLlama(const GgufFile& file, const ModelOptions& options) {
  return LoadLlamaFamily(
      file, options,
      {.arch = "llama", .qkv_bias = Presence::kOptional, .qk_norm = Presence::kAbsent, .rope_neox = false});
}

}  // namespace ragd::inference
