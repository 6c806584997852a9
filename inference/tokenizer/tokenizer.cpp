#include "inference/tokenizer/tokenizer.h"

#include <algorithm>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "inference/tokenizer/tokenizer_model.h"

namespace ragd::inference {

void SortUserDefined(UserDefinedPieces* pieces) {
  std::stable_sort(pieces->begin(), pieces->end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<Fragment> SplitUserDefined(std::string_view text, const UserDefinedPieces& pieces) {
  std::vector<Fragment> frags{{0, text.size(), -1}};
  std::vector<Fragment> next;
  for (const auto& [piece, id] : pieces) {
    if (text.find(piece) == std::string_view::npos) continue;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.id >= 0) {
        next.push_back(f);
        continue;
      }
      size_t pos = f.begin;
      const size_t end = f.begin + f.size;
      for (;;) {
        size_t at = text.substr(pos, end - pos).find(piece);
        if (at == std::string_view::npos) break;
        at += pos;
        if (at > pos) next.push_back({pos, at - pos, -1});
        next.push_back({at, piece.size(), id});
        pos = at + piece.size();
      }
      if (end > pos) next.push_back({pos, end - pos, -1});
    }
    frags.swap(next);
  }
  return frags;
}

TokenId FindEndOfTurn(const GgufFile& gguf, const TokenizerModel& model) {
  if (auto v = gguf.GetInt(std::string(keys::kTokEot)); v && *v >= 0 && *v < model.size()) {
    return static_cast<TokenId>(*v);
  }
  // llama.cpp's names for it, in a fixed order (llama.cpp takes whichever its
  // hash map yields first; Qwen has both <|im_end|> and <|endoftext|>).
  for (const char* piece : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"}) {
    if (const TokenId id = model.PieceToId(piece); id >= 0) return id;
  }
  return -1;
}

Tokenizer::Tokenizer(std::unique_ptr<const TokenizerModel> model) : model_(std::move(model)) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const GgufFile& gguf) {
  const std::string model = gguf.GetString(std::string(keys::kTokModel)).value_or("");
  Result<LoadedModel> loaded =
      Status::Unsupported("tokenizer model '" + model +
                          "' is not supported (only SentencePiece \"llama\" and byte-level BPE \"gpt2\")");
  if (model == "llama") {
    loaded = LoadSentencePiece(gguf);
  } else if (model == "gpt2") {
    loaded = LoadBytePairEncoding(gguf);
  }
  if (!loaded.ok()) return loaded.status();

  std::unique_ptr<Tokenizer> tok(new Tokenizer(std::move(loaded->model)));
  const SpecialTokens& special = loaded->special;
  tok->bos_id_ = special.bos;
  tok->eos_id_ = special.eos;
  tok->eot_id_ = special.eot;
  tok->add_bos_ = special.add_bos;
  tok->end_of_generation_ = special.end_of_generation;
  tok->start_of_turn_id_ = tok->PieceToId("<start_of_turn>");
  tok->end_of_turn_id_ = tok->PieceToId("<end_of_turn>");
  return tok;
}

Result<std::vector<TokenId>> Tokenizer::Encode(std::string_view text) const {
  if (!IsValidUtf8(text)) return Status::InvalidArgument("text is not valid UTF-8");
  return model_->Encode(text);
}

Result<std::string> Tokenizer::Decode(std::span<const TokenId> ids) const {
  std::string out;
  for (TokenId id : ids) {
    if (id < 0 || id >= vocab_size())
      return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
    model_->AppendBytes(id, &out);
  }
  return IsValidUtf8(out) ? out : RepairUtf8(out);
}

Result<std::string> Tokenizer::TokenBytes(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
  std::string out;
  model_->AppendBytes(id, &out);
  return out;
}

Result<std::string> Tokenizer::TokenPiece(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
  return std::string(model_->Piece(id));
}

TokenId Tokenizer::PieceToId(std::string_view piece) const { return model_->PieceToId(piece); }

int Tokenizer::vocab_size() const { return model_->size(); }

bool Tokenizer::IsEndOfGeneration(TokenId id) const {
  return id >= 0 &&
         std::find(end_of_generation_.begin(), end_of_generation_.end(), id) != end_of_generation_.end();
}

bool Tokenizer::IsControl(TokenId id) const {
  return id >= 0 && id < vocab_size() && model_->Type(id) == TokenType::kControl;
}

Result<std::string> IncrementalDecoder::Push(TokenId id) {
  auto bytes = tokenizer_.TokenBytes(id);
  if (!bytes.ok()) return bytes.status();
  pending_ += *bytes;
  const size_t complete = CompleteUtf8Prefix(pending_);
  std::string out = RepairUtf8(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return out;
}

std::string IncrementalDecoder::Flush() {
  // pending_ only ever holds the start of one character cut short.
  std::string out = pending_.empty() ? "" : "\xEF\xBF\xBD";
  pending_.clear();
  return out;
}

}  // namespace ragd::inference
