// Chat formatting: a conversation -> the prompt token ids an instruction-tuned
// model was trained on, with special tokens inserted by id (never parsed from
// text), for each supported template:
//
//   Gemma   <bos><start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n
//           <start_of_turn>model\n{assistant}<end_of_turn>\n ... <start_of_turn>model\n
//           (no system role: system text is folded into the next user turn;
//           contents trimmed of surrounding ASCII whitespace)
//   ChatML  <|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n
//           ... <|im_start|>assistant\n
//           (Qwen2.5's flavour adds its default system message when the
//           conversation has none; contents as they are)
//   Llama 3 <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>
//           ... <|start_header_id|>assistant<|end_header_id|>\n\n   (contents trimmed)
//
// The text between two special tokens is encoded as one string, exactly as
// llama.cpp tokenizes a rendered template, so "<|im_end|>" typed by a user
// cannot close a turn. Stateless functions; thread-safe as the Tokenizer is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "inference/tokenizer/tokenizer.h"

namespace ragd::inference {

class GgufFile;

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;  // UTF-8 text
};

enum class ChatTemplate {
  kNone,  // a base model: no chat format
  kGemma,
  kChatML,      // plain ChatML, no default system message
  kChatMLQwen,  // ChatML with Qwen2.5's default system message
  kLlama3,
};

// "gemma", "chatml", "chatml-qwen", "llama3", "none".
std::string_view ChatTemplateName(ChatTemplate t);
// The inverse; kInvalidArgument naming the accepted values otherwise.
Result<ChatTemplate> ParseChatTemplate(std::string_view name);

// The template a model file was trained with: by the fingerprint of its
// tokenizer.chat_template (the special tokens it spells), else by the
// architecture for a file whose vocabulary has that template's tokens; kNone
// when neither tells (a base model).
ChatTemplate DetectChatTemplate(const GgufFile& file);

// Prompt token ids ending with the assistant's turn opening, ready for generation.
// kInvalidArgument for: an empty list, an unknown role, a conversation whose
// last message is not from the user, text that is not valid UTF-8.
// kUnsupported for kNone, or when the vocabulary lacks the template's tokens.
Result<std::vector<TokenId>> FormatChat(const Tokenizer& tokenizer, ChatTemplate chat_template,
                                        const std::vector<ChatMessage>& messages);

// The same prompt as text with the special tokens spelled out (for logs,
// debugging and "echo"); never tokenize this string back.
Result<std::string> RenderChat(ChatTemplate chat_template, const std::vector<ChatMessage>& messages);

// The Gemma template (FormatChat with kGemma).
Result<std::vector<TokenId>> FormatGemmaChat(const Tokenizer& tokenizer,
                                             const std::vector<ChatMessage>& messages);
Result<std::string> RenderGemmaChat(const std::vector<ChatMessage>& messages);

}  // namespace ragd::inference
