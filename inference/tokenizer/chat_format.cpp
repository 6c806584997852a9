#include "inference/tokenizer/chat_format.h"

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/gguf_names.h"

namespace ragd::inference {
namespace {

constexpr std::string_view kQwenDefaultSystem =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

// A rendered prompt: special tokens (by their piece) and plain text, in order.
struct Segment {
  bool special;
  std::string text;
};
using Segments = std::vector<Segment>;

void Special(Segments* out, std::string_view piece) { out->push_back({true, std::string(piece)}); }
void Text(Segments* out, std::string_view text) {
  if (!out->empty() && !out->back().special) {
    out->back().text += text;
  } else {
    out->push_back({false, std::string(text)});
  }
}

Status CheckMessages(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) return Status::InvalidArgument("messages: the conversation is empty");
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (!IsValidUtf8(m.content)) {
      return Status::InvalidArgument("messages[" + std::to_string(i) + "].content is not valid UTF-8");
    }
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      return Status::InvalidArgument("messages[" + std::to_string(i) + "].role '" + m.role +
                                     "' is not one of system, user, assistant");
    }
  }
  if (messages.back().role != "user") {
    return Status::InvalidArgument("messages: the conversation must end with a user message");
  }
  return Status::Ok();
}

// Gemma has no system role: system text (several messages joined by "\n\n")
// plus "\n\n" goes in front of the next user turn, as llama.cpp's template does.
Segments GemmaSegments(const std::vector<ChatMessage>& messages) {
  Segments out;
  Special(&out, "<bos>");
  std::string system;
  for (const ChatMessage& m : messages) {
    const std::string_view content = Trim(m.content);
    if (m.role == "system") {
      if (!system.empty()) system += "\n\n";
      system += content;
      continue;
    }
    std::string text(content);
    if (m.role == "user" && !system.empty()) {
      text = system + "\n\n" + text;
      system.clear();
    }
    Special(&out, "<start_of_turn>");
    Text(&out, (m.role == "user" ? "user\n" : "model\n") + text);
    Special(&out, "<end_of_turn>");
    Text(&out, "\n");
  }
  Special(&out, "<start_of_turn>");
  Text(&out, "model\n");
  return out;
}

Segments ChatMLSegments(const std::vector<ChatMessage>& messages, bool qwen_default_system) {
  Segments out;
  auto turn = [&](std::string_view role, std::string_view content) {
    Special(&out, "<|im_start|>");
    Text(&out, std::string(role) + "\n" + std::string(content));
    Special(&out, "<|im_end|>");
    Text(&out, "\n");
  };
  if (qwen_default_system && messages.front().role != "system") turn("system", kQwenDefaultSystem);
  for (const ChatMessage& m : messages) turn(m.role, m.content);
  Special(&out, "<|im_start|>");
  Text(&out, "assistant\n");
  return out;
}

Segments Llama3Segments(const std::vector<ChatMessage>& messages) {
  Segments out;
  Special(&out, "<|begin_of_text|>");
  auto header = [&](std::string_view role) {
    Special(&out, "<|start_header_id|>");
    Text(&out, role);
    Special(&out, "<|end_header_id|>");
    Text(&out, "\n\n");
  };
  for (const ChatMessage& m : messages) {
    header(m.role);
    Text(&out, Trim(m.content));
    Special(&out, "<|eot_id|>");
  }
  header("assistant");
  return out;
}

Result<Segments> Render(ChatTemplate t, const std::vector<ChatMessage>& messages) {
  RAGD_RETURN_IF_ERROR(CheckMessages(messages));
  switch (t) {
    case ChatTemplate::kGemma:
      return GemmaSegments(messages);
    case ChatTemplate::kChatML:
    case ChatTemplate::kChatMLQwen:
      return ChatMLSegments(messages, t == ChatTemplate::kChatMLQwen);
    case ChatTemplate::kLlama3:
      return Llama3Segments(messages);
    case ChatTemplate::kNone:
      break;
  }
  return Status::Unsupported("the model has no chat template (a base model): send a plain prompt instead");
}

}  // namespace

std::string_view ChatTemplateName(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::kGemma:
      return "gemma";
    case ChatTemplate::kChatML:
      return "chatml";
    case ChatTemplate::kChatMLQwen:
      return "chatml-qwen";
    case ChatTemplate::kLlama3:
      return "llama3";
    case ChatTemplate::kNone:
      break;
  }
  return "none";
}

Result<ChatTemplate> ParseChatTemplate(std::string_view name) {
  for (ChatTemplate t : {ChatTemplate::kNone, ChatTemplate::kGemma, ChatTemplate::kChatML,
                         ChatTemplate::kChatMLQwen, ChatTemplate::kLlama3}) {
    if (name == ChatTemplateName(t)) return t;
  }
  return Status::InvalidArgument("chat template '" + std::string(name) +
                                 "' is not one of gemma, chatml, chatml-qwen, llama3, none");
}

ChatTemplate DetectChatTemplate(const GgufFile& file) {
  const std::string tmpl = file.GetString(std::string(keys::kChatTemplate)).value_or("");
  if (tmpl.find("<|im_start|>") != std::string::npos) {
    return tmpl.find(kQwenDefaultSystem) != std::string::npos ? ChatTemplate::kChatMLQwen
                                                              : ChatTemplate::kChatML;
  }
  if (tmpl.find("<|start_header_id|>") != std::string::npos) return ChatTemplate::kLlama3;
  if (tmpl.find("<start_of_turn>") != std::string::npos) return ChatTemplate::kGemma;
  // No template text: the Gemma 3 files of this project's tests and the
  // pretrained 270M model have none, but their vocabulary has the turn
  // tokens, and ragd has always formatted chats for them this way.
  if (tmpl.empty() && file.architecture() == "gemma3") return ChatTemplate::kGemma;
  return ChatTemplate::kNone;
}

Result<std::vector<TokenId>> FormatChat(const Tokenizer& tokenizer, ChatTemplate chat_template,
                                        const std::vector<ChatMessage>& messages) {
  auto segments = Render(chat_template, messages);
  if (!segments.ok()) return segments.status();
  std::vector<TokenId> ids;
  for (const Segment& s : *segments) {
    if (s.special) {
      const TokenId id = tokenizer.PieceToId(s.text);
      if (id < 0) {
        return Status::Unsupported("the vocabulary has no " + s.text + " token (chat template " +
                                   std::string(ChatTemplateName(chat_template)) + ")");
      }
      ids.push_back(id);
      continue;
    }
    auto enc = tokenizer.Encode(s.text);
    if (!enc.ok()) return enc.status();
    ids.insert(ids.end(), enc->begin(), enc->end());
  }
  return ids;
}

Result<std::string> RenderChat(ChatTemplate chat_template, const std::vector<ChatMessage>& messages) {
  auto segments = Render(chat_template, messages);
  if (!segments.ok()) return segments.status();
  std::string out;
  for (const Segment& s : *segments) out += s.text;
  return out;
}

Result<std::vector<TokenId>> FormatGemmaChat(const Tokenizer& tokenizer,
                                             const std::vector<ChatMessage>& messages) {
  return FormatChat(tokenizer, ChatTemplate::kGemma, messages);
}

Result<std::string> RenderGemmaChat(const std::vector<ChatMessage>& messages) {
  return RenderChat(ChatTemplate::kGemma, messages);
}

}  // namespace ragd::inference
