// Every GGUF metadata key and tensor name the engine reads, in one table.
// Architecture-specific keys are "<arch>.<suffix>"; use ArchKey() to build them.
#pragma once

#include <string>
#include <string_view>

namespace ragd::inference {

namespace keys {
inline constexpr std::string_view kArchitecture = "general.architecture";
inline constexpr std::string_view kAlignment = "general.alignment";
inline constexpr std::string_view kName = "general.name";
inline constexpr std::string_view kFileType = "general.file_type";

// Suffixes after "<arch>.".
inline constexpr std::string_view kContextLength = "context_length";
inline constexpr std::string_view kEmbeddingLength = "embedding_length";
inline constexpr std::string_view kBlockCount = "block_count";
inline constexpr std::string_view kFeedForwardLength = "feed_forward_length";
inline constexpr std::string_view kHeadCount = "attention.head_count";
inline constexpr std::string_view kHeadCountKv = "attention.head_count_kv";
inline constexpr std::string_view kKeyLength = "attention.key_length";
inline constexpr std::string_view kValueLength = "attention.value_length";
inline constexpr std::string_view kRmsEps = "attention.layer_norm_rms_epsilon";
inline constexpr std::string_view kSlidingWindow = "attention.sliding_window";
inline constexpr std::string_view kRopeFreqBase = "rope.freq_base";
inline constexpr std::string_view kRopeScalingType = "rope.scaling.type";
inline constexpr std::string_view kRopeScalingFactor = "rope.scaling.factor";
inline constexpr std::string_view kRopeDimensionCount = "rope.dimension_count";
inline constexpr std::string_view kFinalLogitSoftcap = "final_logit_softcapping";
inline constexpr std::string_view kAttnLogitSoftcap = "attn_logit_softcapping";

// Tokenizer keys (no architecture prefix).
inline constexpr std::string_view kTokModel = "tokenizer.ggml.model";
inline constexpr std::string_view kTokPre = "tokenizer.ggml.pre";
inline constexpr std::string_view kTokTokens = "tokenizer.ggml.tokens";
inline constexpr std::string_view kTokScores = "tokenizer.ggml.scores";
inline constexpr std::string_view kTokTypes = "tokenizer.ggml.token_type";
inline constexpr std::string_view kTokMerges = "tokenizer.ggml.merges";
inline constexpr std::string_view kTokBos = "tokenizer.ggml.bos_token_id";
inline constexpr std::string_view kTokEos = "tokenizer.ggml.eos_token_id";
inline constexpr std::string_view kTokEot = "tokenizer.ggml.eot_token_id";
inline constexpr std::string_view kTokUnk = "tokenizer.ggml.unknown_token_id";
inline constexpr std::string_view kTokPad = "tokenizer.ggml.padding_token_id";
inline constexpr std::string_view kTokAddBos = "tokenizer.ggml.add_bos_token";
inline constexpr std::string_view kTokAddEos = "tokenizer.ggml.add_eos_token";
inline constexpr std::string_view kTokAddSpacePrefix = "tokenizer.ggml.add_space_prefix";
inline constexpr std::string_view kChatTemplate = "tokenizer.chat_template";
}  // namespace keys

namespace tensors {
inline constexpr std::string_view kTokenEmbd = "token_embd.weight";
inline constexpr std::string_view kOutputNorm = "output_norm.weight";
inline constexpr std::string_view kOutput = "output.weight";
inline constexpr std::string_view kRopeFreqs = "rope_freqs.weight";  // Llama 3 rope scaling factors
// Per-layer suffixes after "blk.<N>.".
inline constexpr std::string_view kAttnNorm = "attn_norm.weight";
inline constexpr std::string_view kAttnQ = "attn_q.weight";
inline constexpr std::string_view kAttnK = "attn_k.weight";
inline constexpr std::string_view kAttnV = "attn_v.weight";
inline constexpr std::string_view kAttnOutput = "attn_output.weight";
inline constexpr std::string_view kAttnQBias = "attn_q.bias";
inline constexpr std::string_view kAttnKBias = "attn_k.bias";
inline constexpr std::string_view kAttnVBias = "attn_v.bias";
inline constexpr std::string_view kAttnOutputBias = "attn_output.bias";
inline constexpr std::string_view kAttnQNorm = "attn_q_norm.weight";
inline constexpr std::string_view kAttnKNorm = "attn_k_norm.weight";
inline constexpr std::string_view kPostAttnNorm = "post_attention_norm.weight";
inline constexpr std::string_view kFfnNorm = "ffn_norm.weight";
inline constexpr std::string_view kFfnGate = "ffn_gate.weight";
inline constexpr std::string_view kFfnUp = "ffn_up.weight";
inline constexpr std::string_view kFfnDown = "ffn_down.weight";
inline constexpr std::string_view kFfnGateBias = "ffn_gate.bias";
inline constexpr std::string_view kFfnUpBias = "ffn_up.bias";
inline constexpr std::string_view kFfnDownBias = "ffn_down.bias";
inline constexpr std::string_view kPostFfwNorm = "post_ffw_norm.weight";
}  // namespace tensors

// "<arch>.<suffix>", e.g. ArchKey("gemma3", keys::kBlockCount) == "gemma3.block_count".
inline std::string ArchKey(std::string_view arch, std::string_view suffix) {
  std::string k(arch);
  k += '.';
  k += suffix;
  return k;
}

// "blk.<layer>.<suffix>".
inline std::string LayerTensor(int layer, std::string_view suffix) {
  std::string n = "blk." + std::to_string(layer) + ".";
  n += suffix;
  return n;
}

}  // namespace ragd::inference
