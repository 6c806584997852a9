#include "inference/tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <unordered_set>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "inference/tokenizer/spm_proto.h"

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

spm::PieceType TypeOf(double gguf_type) {
  const int t = static_cast<int>(gguf_type);
  if (t >= 1 && t <= 6) return static_cast<spm::PieceType>(t);
  return spm::PieceType::kNormal;  // 0 = undefined in older converters
}

}  // namespace

// The vocabulary is kept once (262k pieces), in SentencePiece's model: every
// piece as stored in the GGUF; beside it only each piece's GGUF type. A
// token's text is derived from its piece when asked for.
struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor sp;
  std::vector<uint8_t> types;  // spm::PieceType of each piece (the GGUF's, before any retyping)
  // User-defined pieces (raw text, id), longest first, then by id.
  std::vector<std::pair<std::string, TokenId>> user_defined;

  size_t size() const { return types.size(); }
  std::string_view Piece(TokenId id) const { return sp.IdToPiece(id); }  // the GGUF text: see FromGguf
  spm::PieceType Type(TokenId id) const { return static_cast<spm::PieceType>(types[id]); }
  void AppendBytes(TokenId id, std::string* out) const;
};

namespace {

// A span of the input: raw text (id < 0) or one user-defined token.
struct Fragment {
  size_t begin;
  size_t size;
  TokenId id;
};

// Splits `text` at user-defined pieces exactly as llama.cpp's
// tokenizer_st_partition does: longest piece first, every occurrence in the
// remaining raw fragments, left to right.
std::vector<Fragment> SplitUserDefined(std::string_view text,
                                       const std::vector<std::pair<std::string, TokenId>>& pieces) {
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

}  // namespace

// The text a token contributes: normal pieces with U+2581 as a space,
// user-defined pieces as they are, byte pieces as their byte, others nothing.
void Tokenizer::Impl::AppendBytes(TokenId id, std::string* out) const {
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

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const GgufFile& gguf) {
  const std::string model = gguf.GetString(std::string(keys::kTokModel)).value_or("");
  if (model != "llama") {
    return Status::Unsupported("tokenizer model '" + model +
                               "' is not supported (only SentencePiece, \"llama\")");
  }
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

  auto impl = std::make_unique<Impl>();
  impl->types.resize(n);
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
    impl->types[i] = static_cast<uint8_t>(type);
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
        impl->user_defined.emplace_back(text, static_cast<TokenId>(i));
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

  std::stable_sort(impl->user_defined.begin(), impl->user_defined.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });

  const auto status = impl->sp.LoadFromSerializedProto(spm::SerializeModel(spec));
  if (!status.ok()) return Status::Corrupt("SentencePiece rejected the vocabulary: " + status.ToString());

  std::unique_ptr<Tokenizer> tok(new Tokenizer(std::move(impl)));
  tok->bos_id_ = bos;
  tok->eos_id_ = eos;
  tok->start_of_turn_id_ = tok->PieceToId("<start_of_turn>");
  tok->end_of_turn_id_ = tok->PieceToId("<end_of_turn>");
  return tok;
}

Result<std::vector<TokenId>> Tokenizer::Encode(std::string_view text) const {
  if (!IsValidUtf8(text)) return Status::InvalidArgument("text is not valid UTF-8");
  std::vector<TokenId> out;
  std::vector<int> ids;
  for (const Fragment& f : SplitUserDefined(text, impl_->user_defined)) {
    if (f.id >= 0) {
      out.push_back(f.id);
      continue;
    }
    const auto status = impl_->sp.Encode(text.substr(f.begin, f.size), &ids);
    if (!status.ok()) return Status::Internal("SentencePiece Encode failed: " + status.ToString());
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

Result<std::string> Tokenizer::Decode(std::span<const TokenId> ids) const {
  std::string out;
  for (TokenId id : ids) {
    if (id < 0 || id >= vocab_size())
      return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
    impl_->AppendBytes(id, &out);
  }
  return IsValidUtf8(out) ? out : RepairUtf8(out);
}

Result<std::string> Tokenizer::TokenBytes(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
  std::string out;
  impl_->AppendBytes(id, &out);
  return out;
}

Result<std::string> Tokenizer::TokenPiece(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    return Status::OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary");
  return std::string(impl_->Piece(id));
}

TokenId Tokenizer::PieceToId(std::string_view piece) const {
  std::string key(piece);
  const int id = impl_->sp.PieceToId(key);
  return id >= 0 && id < vocab_size() && impl_->Piece(id) == piece ? id : -1;
}

int Tokenizer::vocab_size() const { return static_cast<int>(impl_->size()); }

bool Tokenizer::IsEndOfGeneration(TokenId id) const {
  return id >= 0 && (id == eos_id_ || id == end_of_turn_id_);
}

bool Tokenizer::IsControl(TokenId id) const {
  return id >= 0 && id < vocab_size() && impl_->Type(id) == spm::PieceType::kControl;
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
