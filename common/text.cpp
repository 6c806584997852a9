#include "common/text.h"

namespace ragd {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], 0 if invalid,
// -1 if it is a valid but truncated prefix at the end of `s`.
int SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  int n;
  unsigned min_cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min_cp = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min_cp = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min_cp = 0x10000;
  } else
    return 0;
  unsigned cp = c & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -1;
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceLength(s, i);
    if (n <= 0) return false;
    i += n;
  }
  return true;
}

size_t CompleteUtf8Prefix(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceLength(s, i);
    if (n < 0) return i;
    i += n == 0 ? 1 : n;
  }
  return s.size();
}

std::string RepairUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceLength(s, i);
    if (n <= 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace ragd
