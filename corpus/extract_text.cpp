// Text encodings (through iconv) and CSV rows.
#include <errno.h>
#include <iconv.h>

#include <algorithm>
#include <vector>

#include "common/text.h"
#include "corpus/extract_formats.h"

namespace ragd::corpus::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Fields of the records of a CSV text; false when a quote is left open.
bool ParseCsv(std::string_view s, char sep, std::vector<std::vector<std::string>>* records) {
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && Trim(field).empty() && !was_quoted) {
      field.clear();
      quoted = was_quoted = true;
    } else if (c == sep) {
      record.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      was_quoted = false;
      records->push_back(std::move(record));
      record.clear();
    } else {
      field += c;
    }
  }
  if (quoted) return false;
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records->push_back(std::move(record));
  }
  return true;
}

char GuessSeparator(std::string_view s) {
  const std::string_view first = s.substr(0, s.find('\n'));
  char best = ',';
  size_t most = 0;
  for (char c : {',', ';', '\t'}) {
    const auto n = static_cast<size_t>(std::count(first.begin(), first.end(), c));
    if (n > most) {
      most = n;
      best = c;
    }
  }
  return best;
}

// A field on one line: runs of white space (line breaks in quoted fields) become one space.
std::string OneLine(std::string_view s) {
  std::string out;
  for (char c : Trim(s)) {
    const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (!space)
      out += c;
    else if (out.back() != ' ')
      out += ' ';
  }
  return out;
}

}  // namespace

Result<std::string> ConvertToUtf8(std::string_view bytes, const std::string& charset) {
  iconv_t cd = iconv_open("UTF-8", charset.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1))
    return Status::Unsupported("unknown text encoding '" + charset + "'");
  // UTF-16 and the single-byte charsets need at most 3 output bytes per input byte.
  std::string out(bytes.size() * 3 + 16, '\0');
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  char* dst = out.data();
  size_t out_left = out.size();
  const size_t unit = charset.starts_with("UTF-16") ? 2 : 1;
  while (in_left > 0) {
    if (iconv(cd, &in, &in_left, &dst, &out_left) != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) {
      const size_t used = static_cast<size_t>(dst - out.data());
      out.resize(out.size() * 2);
      dst = out.data() + used;
      out_left = out.size() - used;
      continue;
    }
    if (errno != EILSEQ && errno != EINVAL) break;
    // An undefined or cut sequence: one replacement character, then go on.
    const size_t used = static_cast<size_t>(dst - out.data());
    out.resize(used);
    out += kReplacement;
    out.resize(used + kReplacement.size() + in_left * 3 + 16);
    dst = out.data() + used + kReplacement.size();
    out_left = out.size() - used - kReplacement.size();
    const size_t skip = std::min(unit, in_left);
    in += skip;
    in_left -= skip;
  }
  iconv_close(cd);
  out.resize(static_cast<size_t>(dst - out.data()));
  return out;
}

Result<FormatText> ExtractCsv(std::string_view utf8, char separator) {
  std::vector<std::vector<std::string>> records;
  if (!ParseCsv(utf8, separator != 0 ? separator : GuessSeparator(utf8), &records))
    return Status::InvalidArgument("malformed CSV: a quoted field is never closed");
  records.erase(std::remove_if(records.begin(), records.end(),
                               [](const std::vector<std::string>& r) {
                                 return std::all_of(r.begin(), r.end(),
                                                    [](const std::string& f) { return Trim(f).empty(); });
                               }),
                records.end());
  FormatText out;
  if (records.empty()) return out;
  const std::vector<std::string>& header = records.front();
  if (records.size() == 1) {
    for (const std::string& h : header) out.text += (out.text.empty() ? "" : "; ") + OneLine(h);
    return out;
  }
  for (size_t r = 1; r < records.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < records[r].size(); ++i) {
      const std::string value = OneLine(records[r][i]);
      if (value.empty()) continue;
      const std::string name = i < header.size() ? OneLine(header[i]) : "";
      line += (line.empty() ? "" : "; ") + (name.empty() ? value : name + ": " + value);
    }
    if (!line.empty()) out.text += line + "\n";
  }
  return out;
}

}  // namespace ragd::corpus::internal
