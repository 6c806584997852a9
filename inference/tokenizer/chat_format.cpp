#include "inference/tokenizer/chat_format.h"

#include "common/text.h"

namespace ragd::inference {
namespace {

// One turn of the template: role as the template spells it, and its text.
struct Turn {
  std::string role;  // "user" or "model"
  std::string text;  // trimmed, system text folded in
};

Result<std::vector<Turn>> ToTurns(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) return Status::InvalidArgument("messages: the conversation is empty");
  std::vector<Turn> turns;
  std::string system;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (!IsValidUtf8(m.content)) {
      return Status::InvalidArgument("messages[" + std::to_string(i) + "].content is not valid UTF-8");
    }
    const std::string_view content = Trim(m.content);
    if (m.role == "system") {
      if (!system.empty()) system += "\n\n";
      system += content;
    } else if (m.role == "user") {
      Turn t{"user", ""};
      if (!system.empty()) {
        t.text = system + "\n\n";
        system.clear();
      }
      t.text += content;
      turns.push_back(std::move(t));
    } else if (m.role == "assistant") {
      turns.push_back({"model", std::string(content)});
    } else {
      return Status::InvalidArgument("messages[" + std::to_string(i) + "].role '" + m.role +
                                     "' is not one of system, user, assistant");
    }
  }
  if (messages.back().role != "user") {
    return Status::InvalidArgument("messages: the conversation must end with a user message");
  }
  return turns;
}

}  // namespace

Result<std::vector<TokenId>> FormatGemmaChat(const Tokenizer& tokenizer,
                                             const std::vector<ChatMessage>& messages) {
  const TokenId sot = tokenizer.start_of_turn_id();
  const TokenId eot = tokenizer.end_of_turn_id();
  if (sot < 0 || eot < 0 || tokenizer.bos_id() < 0) {
    return Status::Unsupported("the vocabulary has no <bos>/<start_of_turn>/<end_of_turn> tokens");
  }
  auto turns = ToTurns(messages);
  if (!turns.ok()) return turns.status();

  std::vector<TokenId> ids{tokenizer.bos_id()};
  const auto append_text = [&](const std::string& text) -> Status {
    auto enc = tokenizer.Encode(text);
    if (!enc.ok()) return enc.status();
    ids.insert(ids.end(), enc->begin(), enc->end());
    return Status::Ok();
  };
  // The text between two special tokens is encoded as one string, exactly as
  // llama.cpp tokenizes a rendered template.
  for (const Turn& t : *turns) {
    ids.push_back(sot);
    RAGD_RETURN_IF_ERROR(append_text(t.role + "\n" + t.text));
    ids.push_back(eot);
    RAGD_RETURN_IF_ERROR(append_text("\n"));
  }
  ids.push_back(sot);
  RAGD_RETURN_IF_ERROR(append_text("model\n"));
  return ids;
}

Result<std::string> RenderGemmaChat(const std::vector<ChatMessage>& messages) {
  auto turns = ToTurns(messages);
  if (!turns.ok()) return turns.status();
  std::string out = "<bos>";
  for (const Turn& t : *turns) out += "<start_of_turn>" + t.role + "\n" + t.text + "<end_of_turn>\n";
  out += "<start_of_turn>model\n";
  return out;
}

}  // namespace ragd::inference
