// Gemma chat formatting: a conversation -> the prompt token ids the model was
// trained on, with special tokens inserted by id (never parsed from text):
//
//   <bos><start_of_turn>user\n{system}\n\n{first user text}<end_of_turn>\n
//   <start_of_turn>model\n{assistant text}<end_of_turn>\n
//   <start_of_turn>user\n{user text}<end_of_turn>\n
//   <start_of_turn>model\n
//
// Every content is trimmed of surrounding ASCII whitespace (as the templates'
// `trim`). Gemma has no system role: system text (several system messages
// joined by "\n\n") plus "\n\n" is folded into the next user turn, as
// llama.cpp's Gemma template does. Consecutive turns of one speaker are kept
// as separate turns. Exactly one BOS. The text of a message is encoded
// as plain text, so "<end_of_turn>" typed by a user cannot close a turn.
// Stateless functions; thread-safe as the Tokenizer is.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;  // UTF-8 text
};

// Prompt token ids ending with "<start_of_turn>model\n", ready for generation.
// kInvalidArgument for: an empty list, an unknown role, a conversation whose
// last message is not from the user, text that is not valid UTF-8.
// kUnsupported when the vocabulary has no <start_of_turn>/<end_of_turn>.
Result<std::vector<TokenId>> FormatGemmaChat(const Tokenizer& tokenizer,
                                             const std::vector<ChatMessage>& messages);

// The same prompt as text with the special tokens spelled out (for logs,
// debugging and /v1/completions "echo"); never tokenize this string back.
Result<std::string> RenderGemmaChat(const std::vector<ChatMessage>& messages);

}  // namespace ragd::inference
