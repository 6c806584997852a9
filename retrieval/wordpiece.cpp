#include "retrieval/wordpiece.h"

#include <utf8proc.h>

#include <fstream>

namespace ragd::retrieval {
namespace {

bool IsWhitespace(char32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029) return true;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_ZS;
}

bool IsControl(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return true;
    default:
      return false;
  }
}

bool IsPunctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool IsCjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

void AppendUtf8(char32_t cp, std::string& out) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

}  // namespace

Result<WordPieceTokenizer> WordPieceTokenizer::Load(const std::string& vocab_path,
                                                    const WordPieceOptions& options) {
  std::ifstream in(vocab_path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open vocabulary " + vocab_path);
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    tokens.push_back(line);
  }
  if (in.bad()) return Status::IoError("cannot read vocabulary " + vocab_path);
  auto tok = FromTokens(std::move(tokens), options);
  if (!tok.ok()) return Status::Corrupt(vocab_path + ": " + tok.status().message());
  return tok;
}

Result<WordPieceTokenizer> WordPieceTokenizer::FromTokens(std::vector<std::string> tokens,
                                                          const WordPieceOptions& options) {
  WordPieceTokenizer t;
  t.options_ = options;
  t.tokens_ = std::move(tokens);
  t.ids_.reserve(t.tokens_.size());
  for (size_t i = 0; i < t.tokens_.size(); ++i) t.ids_.emplace(t.tokens_[i], static_cast<int32_t>(i));
  auto find = [&](const char* name, int32_t& id) -> Status {
    auto it = t.ids_.find(name);
    if (it == t.ids_.end()) return Status::Corrupt(std::string("vocabulary lacks ") + name);
    id = it->second;
    return Status::Ok();
  };
  RAGD_RETURN_IF_ERROR(find("[UNK]", t.unk_id_));
  RAGD_RETURN_IF_ERROR(find("[CLS]", t.cls_id_));
  RAGD_RETURN_IF_ERROR(find("[SEP]", t.sep_id_));
  RAGD_RETURN_IF_ERROR(find("[PAD]", t.pad_id_));
  return t;
}

int32_t WordPieceTokenizer::Lookup(const std::string& piece) const {
  auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

void WordPieceTokenizer::PieceWord(const std::vector<Char>& word, std::vector<TokenSpan>& out) const {
  if (word.empty()) return;
  if (word.size() > options_.max_chars_per_word) {
    out.push_back({unk_id_, word.front().begin, word.back().end});
    return;
  }
  // UTF-8 of the word and the byte offset where each character starts.
  std::string text;
  std::vector<size_t> offset;
  for (const Char& c : word) {
    offset.push_back(text.size());
    AppendUtf8(c.cp, text);
  }
  offset.push_back(text.size());

  const size_t first = out.size();
  std::string piece;
  size_t start = 0;
  while (start < word.size()) {
    int32_t id = -1;
    size_t end = word.size();
    for (; end > start; --end) {
      piece.assign(start > 0 ? "##" : "");
      piece.append(text, offset[start], offset[end] - offset[start]);
      id = Lookup(piece);
      if (id >= 0) break;
    }
    if (id < 0) {
      out.resize(first);
      out.push_back({unk_id_, word.front().begin, word.back().end});
      return;
    }
    out.push_back({id, word[start].begin, word[end - 1].end});
    start = end;
  }
}

std::vector<TokenSpan> WordPieceTokenizer::Tokenize(std::string_view text) const {
  std::vector<TokenSpan> out;
  std::vector<Char> word;
  auto flush = [&] {
    PieceWord(word, out);
    word.clear();
  };
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    const size_t begin = pos;
    if (n <= 0) {  // invalid byte: U+FFFD, which cleaning drops
      pos += 1;
      continue;
    }
    pos += static_cast<size_t>(n);
    const char32_t c = static_cast<char32_t>(cp);
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsWhitespace(c)) {
      flush();
      continue;
    }
    if (options_.split_cjk && IsCjk(c)) {
      flush();
      word.push_back({c, begin, pos});
      flush();
      continue;
    }
    // Normalize one source character into zero or more characters.
    utf8proc_int32_t decomposed[32];
    utf8proc_ssize_t count = 1;
    decomposed[0] = cp;
    if (options_.lowercase) {
      int boundclass = 0;
      count = utf8proc_decompose_char(cp, decomposed, 32, UTF8PROC_DECOMPOSE, &boundclass);
      if (count < 0 || count > 32) {
        count = 1;
        decomposed[0] = cp;
      }
    }
    for (utf8proc_ssize_t i = 0; i < count; ++i) {
      char32_t d = static_cast<char32_t>(decomposed[i]);
      if (options_.lowercase) {
        if (utf8proc_category(decomposed[i]) == UTF8PROC_CATEGORY_MN) continue;
        d = static_cast<char32_t>(utf8proc_tolower(decomposed[i]));
      }
      if (IsPunctuation(d)) {
        flush();
        word.push_back({d, begin, pos});
        flush();
      } else {
        word.push_back({d, begin, pos});
      }
    }
  }
  flush();
  return out;
}

std::vector<int32_t> WordPieceTokenizer::Encode(std::string_view text, size_t max_length) const {
  if (max_length < 2) max_length = 2;
  std::vector<TokenSpan> pieces = Tokenize(text);
  const size_t keep = std::min(pieces.size(), max_length - 2);
  std::vector<int32_t> ids;
  ids.reserve(keep + 2);
  ids.push_back(cls_id_);
  for (size_t i = 0; i < keep; ++i) ids.push_back(pieces[i].id);
  ids.push_back(sep_id_);
  return ids;
}

}  // namespace ragd::retrieval
