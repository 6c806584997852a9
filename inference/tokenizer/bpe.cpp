// Byte-level BPE (GPT-2 style; Qwen2, Llama 3) from a GGUF vocabulary whose
// tokenizer.ggml.model is "gpt2", encoding as llama.cpp's llm_tokenizer_bpe.
//
// GGUF keys read: tokenizer.ggml.tokens (pieces in GPT-2's byte-to-unicode
// alphabet, see ByteAlphabet), tokenizer.ggml.token_type (per piece, see
// TokenType), tokenizer.ggml.merges ("left right", separated by the first
// space after the first character; a merge's rank is its index, the first of
// duplicates counts), tokenizer.ggml.pre (bpe_pretokenizer.h),
// tokenizer.ggml.{bos,eos,eot}_token_id and tokenizer.ggml.add_bos_token.
//
// Every merge's two pieces and their concatenation must be vocabulary pieces,
// and so must the 256 single-byte pieces: then every symbol BPE forms is a
// piece, and merging works on ids (a merge maps an id pair to its rank and
// result) where llama.cpp compares strings, with the same results.
#include <cstring>
#include <queue>
#include <unordered_map>

#include "common/text.h"
#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "inference/tokenizer/bpe_pretokenizer.h"
#include "inference/tokenizer/tokenizer_model.h"

namespace ragd::inference {
namespace {

// GPT-2's byte-to-unicode alphabet: the printable bytes ! .. ~, ¡ .. ¬ and
// ® .. ÿ stand for the code point of the same number; the other 68 bytes, in
// increasing order, for U+0100 .. U+0143.
class ByteAlphabet {
 public:
  static constexpr uint32_t kEnd = 0x144;  // code points below it may stand for a byte

  ByteAlphabet() {
    std::memset(byte_of_code_, -1, sizeof(byte_of_code_));
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      code_of_byte_[b] = printable ? b : next++;
      byte_of_code_[code_of_byte_[b]] = static_cast<int16_t>(b);
    }
  }
  uint32_t Code(uint8_t byte) const { return code_of_byte_[byte]; }
  // The byte code point `cp` stands for, or -1.
  int Byte(uint32_t cp) const { return cp < kEnd ? byte_of_code_[cp] : -1; }

 private:
  uint32_t code_of_byte_[256];
  int16_t byte_of_code_[kEnd];
};

const ByteAlphabet& Alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// `bytes` spelled in the alphabet (the text of the pieces that encode them).
std::string Spell(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) AppendUtf8(Alphabet().Code(static_cast<uint8_t>(c)), &out);
  return out;
}

// Appends the bytes a normal piece stands for. A character outside the
// alphabet (no converter writes one) is kept as its UTF-8.
void AppendUnspelled(std::string_view piece, std::string* out) {
  for (size_t i = 0; i < piece.size();) {
    const auto b0 = static_cast<uint8_t>(piece[i]);
    const size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    uint32_t cp = len == 1 ? b0 : b0 & (0xFF >> (len + 1));
    for (size_t k = 1; k < len && i + k < piece.size(); ++k) cp = cp << 6 | (piece[i + k] & 0x3F);
    if (const int byte = Alphabet().Byte(cp); byte >= 0) {
      out->push_back(static_cast<char>(byte));
    } else {
      out->append(piece.substr(i, len));
    }
    i += len;
  }
}

// End-of-generation pieces llama.cpp knows by name (the entries of its list
// found in common vocabularies). Like llama.cpp, they act as control tokens
// whatever their type says. Its list also has "</s>" (for PaddleOCR), an
// ordinary token in Qwen's vocabulary (HTML's strike-through end tag): ragd
// leaves it out, so it decodes as text and does not stop generation.
constexpr const char* kEndOfGenerationPieces[] = {
    "<|eot_id|>",    "<|eom_id|>",      "<|im_end|>",    "<|end|>",
    "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>", "<EOT>",
};

bool IsEndOfGenerationPiece(std::string_view piece) {
  for (const char* p : kEndOfGenerationPieces) {
    if (piece == p) return true;
  }
  return false;
}

uint64_t PairKey(TokenId left, TokenId right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

class BpeModel final : public TokenizerModel {
 public:
  int size() const override { return static_cast<int>(pieces_.size()); }
  Result<std::vector<TokenId>> Encode(std::string_view text) const override;
  void AppendBytes(TokenId id, std::string* out) const override;
  std::string_view Piece(TokenId id) const override { return pieces_[id]; }
  TokenId PieceToId(std::string_view piece) const override {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
  }
  TokenType Type(TokenId id) const override { return types_[id]; }

 private:
  friend Result<LoadedModel> inference::LoadBytePairEncoding(const GgufFile& gguf);

  struct Merge {
    int32_t rank;
    TokenId result;
  };
  // One symbol of a word being merged; id < 0 once merged into its left neighbour.
  struct Symbol {
    TokenId id;
    int prev;
    int next;
  };
  // A candidate merge of symbols[left] and symbols[right] while they still
  // hold left_id and right_id. Lowest rank first, then leftmost (llama.cpp's
  // llm_bigram_bpe order).
  struct Bigram {
    int32_t rank;
    int left;
    int right;
    TokenId left_id;
    TokenId right_id;
    TokenId result;
    bool operator<(const Bigram& o) const { return rank > o.rank || (rank == o.rank && left > o.left); }
  };
  using BigramQueue = std::priority_queue<Bigram>;

  void EncodeWord(std::string_view word, std::vector<Symbol>* symbols, std::vector<TokenId>* out) const;
  void AddBigram(const std::vector<Symbol>& symbols, int left, int right, BigramQueue* queue) const;

  std::vector<std::string> pieces_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string_view, TokenId> ids_;  // views into pieces_
  std::unordered_map<uint64_t, Merge> merges_;         // by PairKey(left, right)
  TokenId byte_ids_[256] = {};                         // the piece of each single byte
  UserDefinedPieces user_defined_;
  std::unique_ptr<BpePreTokenizer> pre_;
};

Result<std::vector<TokenId>> BpeModel::Encode(std::string_view text) const {
  std::vector<TokenId> out;
  std::vector<std::string_view> words;
  std::vector<Symbol> symbols;
  for (const Fragment& f : SplitUserDefined(text, user_defined_)) {
    if (f.id >= 0) {
      out.push_back(f.id);
      continue;
    }
    words.clear();
    RAGD_RETURN_IF_ERROR(pre_->Split(text.substr(f.begin, f.size), &words));
    for (std::string_view word : words) EncodeWord(word, &symbols, &out);
  }
  return out;
}

void BpeModel::EncodeWord(std::string_view word, std::vector<Symbol>* symbols,
                          std::vector<TokenId>* out) const {
  if (pre_->ignore_merges()) {
    if (const TokenId id = PieceToId(Spell(word)); id >= 0) {
      out->push_back(id);
      return;
    }
  }
  const int n = static_cast<int>(word.size());
  symbols->resize(n);
  for (int i = 0; i < n; ++i)
    (*symbols)[i] = {byte_ids_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
  BigramQueue queue;
  for (int i = 1; i < n; ++i) AddBigram(*symbols, i - 1, i, &queue);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = (*symbols)[b.left];
    Symbol& right = (*symbols)[b.right];
    // Stale when either side has merged since (llama.cpp compares the texts).
    if (left.id != b.left_id || right.id != b.right_id) continue;
    left.id = b.result;
    right.id = -1;
    left.next = right.next;
    if (right.next >= 0) (*symbols)[right.next].prev = b.left;
    AddBigram(*symbols, left.prev, b.left, &queue);
    AddBigram(*symbols, b.left, left.next, &queue);
  }
  for (int i = 0; i >= 0 && i < n; i = (*symbols)[i].next) out->push_back((*symbols)[i].id);
}

void BpeModel::AddBigram(const std::vector<Symbol>& symbols, int left, int right, BigramQueue* queue) const {
  if (left < 0 || right < 0) return;
  const TokenId l = symbols[left].id;
  const TokenId r = symbols[right].id;
  const auto it = merges_.find(PairKey(l, r));
  if (it == merges_.end()) return;
  queue->push({it->second.rank, left, right, l, r, it->second.result});
}

// Normal pieces stand for the bytes they spell, user-defined ones for their
// own text; the others (control, unused, ...) for nothing.
void BpeModel::AppendBytes(TokenId id, std::string* out) const {
  switch (types_[id]) {
    case TokenType::kNormal:
      AppendUnspelled(pieces_[id], out);
      break;
    case TokenType::kUserDefined:
      *out += pieces_[id];
      break;
    default:
      break;
  }
}

// Types outside 1..6 (llama.cpp's "undefined") act as unused: no text. The
// range is checked on the double: converting one past int's range (a damaged
// file's 7.5e28) to int is undefined.
TokenType TypeOf(double gguf_type) {
  return gguf_type >= 1 && gguf_type < 7 ? static_cast<TokenType>(static_cast<int>(gguf_type))
                                         : TokenType::kUnused;
}

const GgufValue* StringArray(const GgufFile& gguf, std::string_view key) {
  const GgufValue* v = gguf.Find(std::string(key));
  return v != nullptr && v->type == GgufValueType::kArray && v->elem_type == GgufValueType::kString ? v
                                                                                                    : nullptr;
}

}  // namespace

Result<LoadedModel> LoadBytePairEncoding(const GgufFile& gguf) {
  const GgufValue* tokens = StringArray(gguf, keys::kTokTokens);
  const GgufValue* types = gguf.Find(std::string(keys::kTokTypes));
  const GgufValue* merges = StringArray(gguf, keys::kTokMerges);
  if (tokens == nullptr || tokens->strings.empty()) {
    return Status::Corrupt("GGUF has no tokenizer.ggml.tokens string array");
  }
  const size_t n = tokens->strings.size();
  if (n > static_cast<size_t>(INT32_MAX)) return Status::Corrupt("vocabulary too large");
  if (types == nullptr || types->numbers.size() != n) {
    return Status::Corrupt("tokenizer.ggml.token_type is missing or its length differs from the token count");
  }
  if (merges == nullptr) return Status::Corrupt("BPE vocabulary has no tokenizer.ggml.merges string array");

  auto pre = BpePreTokenizer::Create(gguf.GetString(std::string(keys::kTokPre)).value_or(""));
  if (!pre.ok()) return pre.status();

  auto model = std::make_unique<BpeModel>();
  model->pre_ = std::move(pre).value();
  model->pieces_ = tokens->strings;
  model->types_.resize(n);
  model->ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string& piece = model->pieces_[i];
    if (piece.empty()) piece = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp names it
    if (!model->ids_.emplace(piece, static_cast<TokenId>(i)).second) {
      return Status::Corrupt("token '" + piece + "' is defined twice");
    }
    TokenType type = TypeOf(types->numbers[i]);
    if (IsEndOfGenerationPiece(piece)) type = TokenType::kControl;
    model->types_[i] = type;
    if (type == TokenType::kUserDefined) {
      // Encode matches them on the raw text, whose fragments must stay UTF-8.
      if (!IsValidUtf8(piece))
        return Status::Corrupt("user-defined token " + std::to_string(i) + " is not UTF-8");
      model->user_defined_.emplace_back(piece, static_cast<TokenId>(i));
    }
  }
  SortUserDefined(&model->user_defined_);

  for (int b = 0; b < 256; ++b) {
    const std::string piece = Spell(std::string(1, static_cast<char>(b)));
    model->byte_ids_[b] = model->PieceToId(piece);
    if (model->byte_ids_[b] < 0) {
      return Status::Corrupt("BPE vocabulary lacks the piece '" + piece + "' of byte " + std::to_string(b));
    }
  }

  model->merges_.reserve(merges->strings.size());
  std::string joined;
  for (size_t rank = 0; rank < merges->strings.size(); ++rank) {
    const std::string_view merge = merges->strings[rank];
    const size_t space = merge.find(' ', 1);
    if (space == std::string_view::npos) {
      return Status::Corrupt("BPE merge " + std::to_string(rank) + " '" + std::string(merge) +
                             "' is not two pieces separated by a space");
    }
    const std::string_view left = merge.substr(0, space);
    const std::string_view right = merge.substr(space + 1);
    joined.assign(left).append(right);
    const TokenId ids[3] = {model->PieceToId(left), model->PieceToId(right), model->PieceToId(joined)};
    const std::string_view texts[3] = {left, right, joined};
    for (int k = 0; k < 3; ++k) {
      if (ids[k] < 0) {
        return Status::Corrupt("BPE merge " + std::to_string(rank) + " '" + std::string(merge) +
                               "' needs the piece '" + std::string(texts[k]) +
                               "', absent from the vocabulary");
      }
    }
    model->merges_.try_emplace(PairKey(ids[0], ids[1]), BpeModel::Merge{static_cast<int32_t>(rank), ids[2]});
  }

  const auto id_key = [&](std::string_view key) -> TokenId {
    const auto v = gguf.GetInt(std::string(key));
    return v && *v >= 0 && static_cast<size_t>(*v) < n ? static_cast<TokenId>(*v) : -1;
  };
  LoadedModel loaded;
  SpecialTokens& special = loaded.special;
  special.bos = id_key(keys::kTokBos);
  special.eos = id_key(keys::kTokEos);
  special.add_bos = gguf.GetInt(std::string(keys::kTokAddBos)).value_or(model->pre_->add_bos()) != 0;
  special.eot = FindEndOfTurn(gguf, *model);
  for (TokenId id : {special.eos, special.eot}) {
    if (id >= 0) special.end_of_generation.push_back(id);
  }
  for (const char* piece : kEndOfGenerationPieces) {
    if (const TokenId id = model->PieceToId(piece); id >= 0) special.end_of_generation.push_back(id);
  }
  loaded.model = std::move(model);
  return loaded;
}

}  // namespace ragd::inference
