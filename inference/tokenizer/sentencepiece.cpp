// SentencePiece (BPE with byte fallback) from a GGUF vocabulary whose
// tokenizer.ggml.model is "llama" (Gemma): the pieces go into SentencePiece's
// own matcher through a hand-serialized ModelProto (spm_proto.h).
#include <sentencepiece_processor.h>

#include <unordered_set>

#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "inference/tokenizer/spm_proto.h"
#include "inference/tokenizer/tokenizer_model.h"

namespace ragd::inference {
namespace {

constexpr std::string_view kSpace = " ";
constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's escaped space

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, from.size(), from) == 0) {
      out += to;
      i += from.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// "<0xNN>" -> NN, or -1.
int ByteOfPiece(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  int v = 0;
  for (char c : p.substr(3, 2)) {
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= c - '0';
    else if (c >= 'A' && c <= 'F')
      v |= c - 'A' + 10;
    else if (c >= 'a' && c <= 'f')
      v |= c - 'a' + 10;
    else
      return -1;
  }
  return v;
}

// The range is checked on the double: converting one past int's range to
// int is undefined.
spm::PieceType TypeOf(double gguf_type) {
  if (gguf_type >= 1 && gguf_type < 7) return static_cast<spm::PieceType>(static_cast<int>(gguf_type));
  return spm::PieceType::kNormal;  // 0 = undefined in older converters
}

// The vocabulary is kept once (262k pieces), in SentencePiece's model: every
// piece as stored in the GGUF; beside it only each piece's GGUF type. A
// token's text is derived from its piece when asked for.
class SentencePieceModel final : public TokenizerModel {
 public:
  int size() const override { return static_cast<int>(types_.size()); }
  Result<std::vector<TokenId>> Encode(std::string_view text) const override;
  void AppendBytes(TokenId id, std::string* out) const override;
  std::string_view Piece(TokenId id) const override { return sp_.IdToPiece(id); }
  TokenId PieceToId(std::string_view piece) const override;
  TokenType Type(TokenId id) const override { return static_cast<spm::PieceType>(types_[id]); }

 private:
  friend Result<LoadedModel> inference::LoadSentencePiece(const GgufFile& gguf);

  sentencepiece::SentencePieceProcessor sp_;
  std::vector<uint8_t> types_;  // spm::PieceType of each piece (the GGUF's, before any retyping)
  UserDefinedPieces user_defined_;
};

Result<std::vector<TokenId>> SentencePieceModel::Encode(std::string_view text) const {
  std::vector<TokenId> out;
  std::vector<int> ids;
  for (const Fragment& f : SplitUserDefined(text, user_defined_)) {
    if (f.id >= 0) {
      out.push_back(f.id);
      continue;
    }
    const auto status = sp_.Encode(text.substr(f.begin, f.size), &ids);
    if (!status.ok()) return Status::Internal("SentencePiece Encode failed: " + status.ToString());
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

// The text a token contributes: normal pieces with U+2581 as a space,
// user-defined pieces as they are, byte pieces as their byte, others nothing.
void SentencePieceModel::AppendBytes(TokenId id, std::string* out) const {
  const std::string_view piece = Piece(id);
  switch (Type(id)) {
    case spm::PieceType::kNormal:
      *out += ReplaceAll(piece, kSpmSpace, kSpace);
      break;
    case spm::PieceType::kUserDefined:
      *out += piece;
      break;
    case spm::PieceType::kByte:
      out->push_back(static_cast<char>(ByteOfPiece(piece)));
      break;
    default:
      break;
  }
}

TokenId SentencePieceModel::PieceToId(std::string_view piece) const {
  std::string key(piece);
  const int id = sp_.PieceToId(key);
  return id >= 0 && id < size() && Piece(id) == piece ? id : -1;
}

}  // namespace

Result<LoadedModel> LoadSentencePiece(const GgufFile& gguf) {
  const GgufValue* tokens = gguf.Find(std::string(keys::kTokTokens));
  const GgufValue* scores = gguf.Find(std::string(keys::kTokScores));
  const GgufValue* types = gguf.Find(std::string(keys::kTokTypes));
  if (tokens == nullptr || tokens->type != GgufValueType::kArray || tokens->strings.empty()) {
    return Status::Corrupt("GGUF has no tokenizer.ggml.tokens string array");
  }
  const size_t n = tokens->strings.size();
  if (scores == nullptr || scores->numbers.size() != n) {
    return Status::Corrupt("tokenizer.ggml.scores is missing or its length differs from the token count");
  }
  if (types == nullptr || types->numbers.size() != n) {
    return Status::Corrupt("tokenizer.ggml.token_type is missing or its length differs from the token count");
  }
  if (n > static_cast<size_t>(INT32_MAX)) return Status::Corrupt("vocabulary too large");

  auto impl = std::make_unique<SentencePieceModel>();
  impl->types_.resize(n);
  spm::ModelSpec spec;
  spec.pieces.resize(n);

  const auto id_key = [&](std::string_view key, const char* piece) -> TokenId {
    if (auto v = gguf.GetInt(std::string(key)); v && *v >= 0 && static_cast<size_t>(*v) < n) {
      return static_cast<TokenId>(*v);
    }
    for (size_t i = 0; i < n; ++i) {
      if (tokens->strings[i] == piece) return static_cast<TokenId>(i);
    }
    return -1;
  };
  const TokenId unk = id_key(keys::kTokUnk, "<unk>");
  const TokenId bos = id_key(keys::kTokBos, "<bos>");
  const TokenId eos = id_key(keys::kTokEos, "<eos>");

  bool have_unknown = false;
  std::vector<bool> byte_seen(256, false);
  for (size_t i = 0; i < n; ++i) {
    const std::string& text = tokens->strings[i];
    const spm::PieceType type = TypeOf(types->numbers[i]);
    impl->types_[i] = static_cast<uint8_t>(type);
    spm::Piece& p = spec.pieces[i];
    p.score = static_cast<float>(scores->numbers[i]);
    p.type = type;
    switch (type) {
      case spm::PieceType::kNormal:
        p.text = text;
        break;
      case spm::PieceType::kUserDefined:
        // Matched on the raw text by Encode() before SentencePiece sees it
        // (as llama.cpp does), so a typed U+2581 never joins a run of spaces.
        p.text = text;
        impl->user_defined_.emplace_back(text, static_cast<TokenId>(i));
        break;
      case spm::PieceType::kByte: {
        const int b = ByteOfPiece(text);
        if (b < 0) return Status::Corrupt("byte token " + std::to_string(i) + " is not of the form <0xNN>");
        byte_seen[b] = true;
        p.text = text;
        break;
      }
      default:  // control, unknown, unused: no text
        p.text = text;
        break;
    }
    if (type == spm::PieceType::kUnknown) have_unknown = true;
  }
  for (int b = 0; b < 256; ++b) {
    if (!byte_seen[b]) {
      static const char* kHex = "0123456789ABCDEF";
      return Status::Corrupt(std::string("vocabulary lacks the byte-fallback token <0x") + kHex[b >> 4] +
                             kHex[b & 15] + ">");
    }
  }
  // SentencePiece needs exactly one UNKNOWN piece; Gemma's GGUF types <unk>
  // as CONTROL, so the unknown_token_id is retyped for the matcher only.
  if (!have_unknown) {
    if (unk < 0) return Status::Corrupt("vocabulary has no unknown token");
    spec.pieces[unk].type = spm::PieceType::kUnknown;
  }
  {
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (spec.pieces[i].text.empty()) return Status::Corrupt("token " + std::to_string(i) + " is empty");
      if (!seen.insert(spec.pieces[i].text).second) {
        return Status::Corrupt("token '" + spec.pieces[i].text + "' is defined twice");
      }
    }
  }
  spec.unk_id = unk;
  spec.bos_id = bos;
  spec.eos_id = eos;
  spec.pad_id = id_key(keys::kTokPad, "<pad>");
  if (spec.pad_id == unk || spec.pad_id == bos || spec.pad_id == eos) spec.pad_id = -1;

  SortUserDefined(&impl->user_defined_);

  const auto status = impl->sp_.LoadFromSerializedProto(spm::SerializeModel(spec));
  if (!status.ok()) return Status::Corrupt("SentencePiece rejected the vocabulary: " + status.ToString());

  LoadedModel loaded;
  loaded.special.bos = bos;
  loaded.special.eos = eos;
  // llama.cpp adds BOS to SentencePiece prompts unless the GGUF says otherwise.
  loaded.special.add_bos = gguf.GetInt(std::string(keys::kTokAddBos)).value_or(1) != 0;
  loaded.special.eot = FindEndOfTurn(gguf, *impl);
  loaded.special.end_of_generation = {eos};
  if (const TokenId end_of_turn = impl->PieceToId("<end_of_turn>"); end_of_turn >= 0) {
    loaded.special.end_of_generation.push_back(end_of_turn);
  }
  loaded.model = std::move(impl);
  return loaded;
}

}  // namespace ragd::inference
