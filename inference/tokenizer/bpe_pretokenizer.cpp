#include "inference/tokenizer/bpe_pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

namespace ragd::inference {
namespace {

// llama.cpp's regexes, spelled as in src/llama-vocab.cpp.
constexpr std::string_view kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr std::string_view kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// What llama.cpp does for each pre value ragd implements.
struct PreSpec {
  std::vector<std::string_view> names;
  std::vector<std::string_view> regexes;
  bool ignore_merges = false;
  bool add_bos = false;
};

const std::vector<PreSpec>& Specs() {
  static const std::vector<PreSpec> specs = {
      {{"", "default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
      {{"gpt-2", "phi-2", "mpt", "olmo"}, {kGpt2}},
      {{"llama3", "llama-v3", "llama-bpe"}, {kLlama3}, /*ignore_merges=*/true, /*add_bos=*/true},
      {{"dbrx", "smaug-bpe"}, {kLlama3}},
      {{"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2"}, {kQwen2}},
      {{"smollm", "starcoder", "refact", "codeshell", "command-r", "exaone", "minerva-7b"},
       {"\\p{N}", kGpt2}},
  };
  return specs;
}

// llama.cpp's \s: the Unicode White_Space characters (PCRE2's \s would add
// U+180E and is not used).
constexpr std::string_view kWhitespace =
    "\\t\\n\\x{0B}\\f\\r "
    "\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// Characters llama.cpp's tables (Unicode 15.1) put in \p{L}, \p{N} and \p{P}
// that PCRE2 10.42 (Unicode 14) has as unassigned: Kawi, Nag Mundari, CJK
// extensions H and I, ... Listing them keeps every code point in the class
// llama.cpp gives it (a newer PCRE2 already has them).
constexpr std::string_view kExtraLetters =
    "\\x{1123F}-\\x{11240}\\x{11F02}\\x{11F04}-\\x{11F10}\\x{11F12}-\\x{11F33}\\x{1342F}\\x{13441}-\\x{13446}"
    "\\x{1B132}\\x{1B155}\\x{1DF25}-\\x{1DF2A}\\x{1E030}-\\x{1E06D}\\x{1E4D0}-\\x{1E4EB}\\x{2B739}"
    "\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}";
constexpr std::string_view kExtraNumbers = "\\x{11F50}-\\x{11F59}\\x{1D2C0}-\\x{1D2D3}\\x{1E4F0}-\\x{1E4F9}";
constexpr std::string_view kExtraPunctuation = "\\x{11B00}-\\x{11B09}\\x{11F43}-\\x{11F4F}";

// `regex` with \s, \S, \p{L}, \p{N} and \p{P} spelled out as above, inside a
// character class as members, outside as a class of their own.
std::string ToPcre(std::string_view regex) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c != '\\' || i + 1 == regex.size()) {
      if (c == '[') in_class = true;
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    std::string members;
    bool negated = false;
    const std::string_view rest = regex.substr(i);
    size_t used = 2;
    if (rest.starts_with("\\s")) {
      members = kWhitespace;
    } else if (rest.starts_with("\\S")) {
      members = kWhitespace;
      negated = true;
    } else if (rest.starts_with("\\p{L}")) {
      members = "\\p{L}" + std::string(kExtraLetters);
      used = 5;
    } else if (rest.starts_with("\\p{N}")) {
      members = "\\p{N}" + std::string(kExtraNumbers);
      used = 5;
    } else if (rest.starts_with("\\p{P}")) {
      members = "\\p{P}" + std::string(kExtraPunctuation);
      used = 5;
    } else {
      out += regex.substr(i, 2);  // any other escape, kept
      ++i;
      continue;
    }
    // A negated set cannot be a member of a class; llama.cpp's regexes only
    // use \S outside one.
    out += in_class ? members : (negated ? "[^" : "[") + members + "]";
    i += used - 1;
  }
  return out;
}

}  // namespace

struct BpePreTokenizer::Regexes {
  std::vector<pcre2_code*> codes;
  ~Regexes() {
    for (pcre2_code* c : codes) pcre2_code_free(c);
  }
};

BpePreTokenizer::~BpePreTokenizer() = default;

Result<std::unique_ptr<BpePreTokenizer>> BpePreTokenizer::Create(std::string_view pre) {
  const PreSpec* spec = nullptr;
  for (const PreSpec& s : Specs()) {
    for (std::string_view name : s.names) {
      if (name == pre) spec = &s;
    }
  }
  if (spec == nullptr) {
    return Status::Unsupported(
        "BPE pre-tokenizer '" + std::string(pre) +
        "' (tokenizer.ggml.pre) is not supported; ragd knows qwen2, llama-bpe, smollm, "
        "gpt-2 and llama.cpp's other names for their regexes");
  }
  std::unique_ptr<BpePreTokenizer> p(new BpePreTokenizer());
  p->ignore_merges_ = spec->ignore_merges;
  p->add_bos_ = spec->add_bos;
  p->regexes_ = std::make_unique<Regexes>();
  for (std::string_view regex : spec->regexes) {
    const std::string pattern = ToPcre(regex);
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      return Status::Internal("PCRE2 rejected the pre-tokenizer regex '" + pattern + "' at offset " +
                              std::to_string(offset) + ": " + reinterpret_cast<const char*>(message));
    }
    p->regexes_->codes.push_back(code);
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // when unavailable pcre2_match interprets
  }
  return p;
}

Status BpePreTokenizer::Split(std::string_view text, std::vector<std::string_view>* words) const {
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (pcre2_code* code : regexes_->codes) {
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
    if (match == nullptr) return Status::Internal("out of memory for PCRE2 match data");
    next.clear();
    for (std::string_view word : current) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(word.data());
      size_t taken = 0;  // end of the last word taken
      size_t start = 0;  // where the next match may begin
      while (start < word.size()) {
        const int rc =
            pcre2_match(code, subject, word.size(), start, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) return Status::Internal("PCRE2 match failed with error " + std::to_string(rc));
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
        if (ov[1] == ov[0]) {
          // No regex here matches the empty string; should one, step over a character.
          start = ov[0] + 1;
          while (start < word.size() && (static_cast<unsigned char>(word[start]) & 0xC0) == 0x80) ++start;
          continue;
        }
        if (ov[0] > taken) next.push_back(word.substr(taken, ov[0] - taken));
        next.push_back(word.substr(ov[0], ov[1] - ov[0]));
        taken = start = ov[1];
      }
      if (taken < word.size()) next.push_back(word.substr(taken));
    }
    current.swap(next);
  }
  words->insert(words->end(), current.begin(), current.end());
  return Status::Ok();
}

}  // namespace ragd::inference
