#include "corpus/extract.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/text.h"
#include "corpus/extract_formats.h"

namespace ragd::corpus {
namespace {

enum class Format { kUnknown, kText, kMarkdown, kHtml, kPdf, kCsv, kZip };

// How the bytes are to be read, from the name, the declared type or the content.
struct Detected {
  Format format = Format::kUnknown;
  internal::ZipFormat zip = internal::ZipFormat::kUnknown;  // kZip: which document format
  char csv_separator = 0;                                   // kCsv: 0 = guess
};

constexpr std::string_view kSupported =
    "(supported: plain text, Markdown, HTML, PDF, CSV, DOCX, ODT, PPTX, EPUB)";

constexpr size_t kMaxTitleBytes = 200;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view BaseName(std::string_view file_name) {
  const size_t slash = file_name.find_last_of("/\\");
  return slash == std::string_view::npos ? file_name : file_name.substr(slash + 1);
}

// Lowercase extension without the dot, "" when none.
std::string Extension(std::string_view file_name) {
  const std::string_view base = BaseName(file_name);
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return Lower(base.substr(dot + 1));
}

std::string Stem(std::string_view file_name) {
  std::string_view base = BaseName(file_name);
  const size_t dot = base.rfind('.');
  if (dot != std::string_view::npos && dot > 0) base = base.substr(0, dot);
  return std::string(Trim(base));
}

// Declared media type -> format; kUnknown when undeclared. Sets *refusal for
// a declared type we do not read.
Detected FromDeclared(std::string_view declared, std::string* refusal) {
  std::string type = Lower(Trim(declared.substr(0, declared.find(';'))));
  if (type.empty() || type == "application/octet-stream") return {};
  if (type == "text/markdown" || type == "text/x-markdown") return {Format::kMarkdown};
  if (type == "text/html" || type == "application/xhtml+xml") return {Format::kHtml};
  if (type == "application/pdf") return {Format::kPdf};
  if (type == "text/csv") return {Format::kCsv};
  if (type == "text/tab-separated-values") return {Format::kCsv, internal::ZipFormat::kUnknown, '\t'};
  if (type == kMediaDocx) return {Format::kZip, internal::ZipFormat::kDocx};
  if (type == kMediaOdt) return {Format::kZip, internal::ZipFormat::kOdt};
  if (type == kMediaPptx) return {Format::kZip, internal::ZipFormat::kPptx};
  if (type == kMediaEpub) return {Format::kZip, internal::ZipFormat::kEpub};
  // Other text types (JSON, XML, YAML) are read as plain text.
  if (type.starts_with("text/") || type == "application/json" || type == "application/xml" ||
      type == "application/x-yaml" || type == "application/yaml" || type == "application/x-ndjson" ||
      type == "application/toml") {
    return {Format::kText};
  }
  *refusal = "unsupported media type '" + type + "' " + std::string(kSupported);
  return {};
}

Detected FromExtension(const std::string& ext, std::string* refusal) {
  static constexpr std::array<std::string_view, 16> kText = {"txt", "text", "log", "json", "jsonl", "yaml",
                                                             "yml", "toml", "ini", "cfg",  "conf",  "rst",
                                                             "xml", "tex",  "srt", "vtt"};
  static constexpr std::array<std::string_view, 28> kRefused = {
      "doc",  "xlsx", "xls",  "ppt", "ods", "odp", "rtf", "png", "jpg", "jpeg", "gif", "bmp", "webp", "tif",
      "tiff", "ico",  "heic", "zip", "gz",  "tgz", "bz2", "xz",  "7z",  "rar",  "tar", "exe", "mp3",  "mp4"};
  if (ext.empty()) return {};
  if (ext == "md" || ext == "markdown" || ext == "mdown" || ext == "mkd") return {Format::kMarkdown};
  if (ext == "html" || ext == "htm" || ext == "xhtml") return {Format::kHtml};
  if (ext == "pdf") return {Format::kPdf};
  if (ext == "csv") return {Format::kCsv};
  if (ext == "tsv") return {Format::kCsv, internal::ZipFormat::kUnknown, '\t'};
  if (ext == "docx") return {Format::kZip, internal::ZipFormat::kDocx};
  if (ext == "odt") return {Format::kZip, internal::ZipFormat::kOdt};
  if (ext == "pptx") return {Format::kZip, internal::ZipFormat::kPptx};
  if (ext == "epub") return {Format::kZip, internal::ZipFormat::kEpub};
  if (std::find(kText.begin(), kText.end(), ext) != kText.end()) return {Format::kText};
  if (std::find(kRefused.begin(), kRefused.end(), ext) != kRefused.end()) {
    *refusal = "unsupported file type '." + ext + "' " + std::string(kSupported);
  }
  return {};
}

// Names a well-known binary container from its first bytes, "" when none.
std::string_view BinaryMagic(std::string_view b) {
  struct Magic {
    std::string_view prefix, name;
  };
  static constexpr Magic kMagics[] = {
      {"\xD0\xCF\x11\xE0", "a legacy Office document"},
      {"\x89PNG", "a PNG image"},
      {"\xFF\xD8\xFF", "a JPEG image"},
      {"GIF8", "a GIF image"},
      {"{\\rtf", "an RTF document"},
      {"\x1F\x8B", "a gzip archive"},
      {"\x7F"
       "ELF",
       "an executable"},
  };
  for (const Magic& m : kMagics) {
    if (b.starts_with(m.prefix)) return m.name;
  }
  return {};
}

bool LooksLikeHtml(std::string_view b) {
  const std::string head = Lower(Trim(b.substr(0, 512)));
  return head.starts_with("<!doctype html") || head.starts_with("<html") ||
         (head.starts_with("<!--") && head.find("<html") != std::string::npos);
}

size_t CountOccurrences(std::string_view s, std::string_view needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string_view::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

// The charset parameter of a declared media type, upper case; "" when none.
// ISO-8859-1 and ASCII are read as Windows-1252, their superset (as browsers do).
std::string DeclaredCharset(std::string_view declared) {
  const std::string lower = Lower(declared);
  const size_t at = lower.find("charset=");
  if (at == std::string::npos) return {};
  std::string_view value = std::string_view(lower).substr(at + 8);
  value = value.substr(0, value.find(';'));
  value = Trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
    value = value.substr(1, value.size() - 2);
  std::string name(Trim(value));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name == "ISO-8859-1" || name == "LATIN1" || name == "ISO8859-1" || name == "US-ASCII" ||
      name == "ASCII")
    return "WINDOWS-1252";
  return name;
}

// True when `bytes` holds nothing Windows-1252 leaves undefined.
bool FitsWindows1252(std::string_view bytes) {
  return std::none_of(bytes.begin(), bytes.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D;
  });
}

// Checks that `bytes` is text and returns it as valid UTF-8 without a BOM.
// UTF-16 with a byte order mark, and text in a declared charset, are
// converted; text that is not UTF-8 at all (no byte above 0x7F starts a
// valid sequence) is read as Windows-1252 when that defines every byte.
Result<std::string> DecodeText(std::string_view bytes, const std::string& charset,
                               const ExtractOptions& options) {
  std::string converted;
  if (bytes.starts_with("\xFF\xFE") || bytes.starts_with("\xFE\xFF")) {
    auto utf8 = internal::ConvertToUtf8(bytes.substr(2), bytes[0] == '\xFF' ? "UTF-16LE" : "UTF-16BE");
    if (!utf8.ok()) return utf8.status();
    converted = std::move(utf8).value();
    bytes = converted;
  } else if (!charset.empty() && charset != "UTF-8" && charset != "UTF8") {
    // A charset iconv does not know is ignored: the bytes are judged as undeclared.
    if (auto utf8 = internal::ConvertToUtf8(bytes, charset); utf8.ok()) {
      converted = std::move(utf8).value();
      bytes = converted;
    }
  }
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
  size_t control = 0, high = 0;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return Status::Unsupported("binary content (NUL bytes); not a text document");
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) ++control;
    high += c >= 0x80;
  }
  if (static_cast<double>(control) > options.max_control_fraction * static_cast<double>(bytes.size())) {
    return Status::Unsupported("binary content (" + std::to_string(control) + " control bytes in " +
                               std::to_string(bytes.size()) + "); not a text document");
  }
  if (IsValidUtf8(bytes)) return std::string(bytes);
  std::string repaired = RepairUtf8(bytes);
  // Each invalid byte became one U+FFFD; subtract the ones that were there before.
  const size_t invalid = CountOccurrences(repaired, "\xEF\xBF\xBD") - CountOccurrences(bytes, "\xEF\xBF\xBD");
  if (converted.empty() && invalid == high && FitsWindows1252(bytes)) {
    return internal::ConvertToUtf8(bytes, "WINDOWS-1252");
  }
  const double allowed = std::max(4.0, options.max_invalid_utf8_fraction * static_cast<double>(bytes.size()));
  if (static_cast<double>(invalid) > allowed || invalid * 4 >= bytes.size()) {
    return Status::InvalidArgument("invalid UTF-8 (" + std::to_string(invalid) + " bad bytes in " +
                                   std::to_string(bytes.size()) + "); save the file as UTF-8");
  }
  return repaired;
}

// "\r\n" and lone "\r" become "\n"; \f (unless kept) and \v become "\n";
// other control characters (except \t) become spaces.
std::string NormalizeText(std::string_view s, bool keep_form_feeds = false) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\r') {
      if (i + 1 < s.size() && s[i + 1] == '\n') continue;
      out += '\n';
    } else if ((c == '\f' && !keep_form_feeds) || c == '\v') {
      out += '\n';
    } else if ((c < 0x20 && c != '\t' && c != '\n' && !(c == '\f' && keep_form_feeds)) || c == 0x7F) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// The text of the first level-1 ATX heading outside code fences, "" when none.
std::string MarkdownTitle(std::string_view text) {
  bool in_fence = false;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::string_view trimmed = Trim(line);
    if (trimmed.starts_with("```") || trimmed.starts_with("~~~")) in_fence = !in_fence;
    if (in_fence || !line.starts_with("# ")) continue;
    std::string_view title = Trim(line.substr(2));
    while (title.ends_with('#')) title.remove_suffix(1);
    title = Trim(title);
    if (!title.empty()) return std::string(title);
  }
  return {};
}

// First non-blank line, cut to at most 100 bytes on a character boundary.
std::string FirstLine(std::string_view text) {
  std::string_view t = Trim(text);
  t = t.substr(0, t.find('\n'));
  t = Trim(t);
  if (t.size() > 100) t = t.substr(0, CompleteUtf8Prefix(t.substr(0, 100)));
  return std::string(t);
}

std::string CollapseSpaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return std::string(Trim(out));
}

}  // namespace

Result<ExtractedDocument> Extract(std::string_view bytes, std::string_view file_name,
                                  std::string_view declared_media_type, const ExtractOptions& options) {
  if (bytes.size() > options.max_bytes) {
    return Status::OutOfRange("document of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                              std::to_string(options.max_bytes) + " bytes");
  }
  std::string refusal;
  Detected detected = FromDeclared(declared_media_type, &refusal);
  if (!refusal.empty()) return Status::Unsupported(refusal);
  const std::string charset = DeclaredCharset(declared_media_type);
  const std::string ext = Extension(file_name);
  // The PDF header may follow a little junk, but only a file claimed to be a
  // PDF is searched for it (text about PDFs may quote it).
  const Detected by_ext_hint = FromExtension(ext, &refusal);
  refusal.clear();
  const bool claims_pdf = detected.format == Format::kPdf || by_ext_hint.format == Format::kPdf;
  const bool is_pdf = bytes.starts_with("%PDF-") ||
                      (claims_pdf && bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos);
  const bool is_zip = bytes.starts_with("PK\x03\x04");
  if (is_pdf) {
    detected = {Format::kPdf};
  } else if (is_zip) {
    // The archive's content names the format; a name or declared type must agree with it.
    const internal::ZipFormat claimed = detected.format == Format::kZip ? detected.zip : by_ext_hint.zip;
    detected = {Format::kZip, claimed};
  } else if (const std::string_view magic = BinaryMagic(bytes); !magic.empty()) {
    return Status::Unsupported(std::string("unsupported format: ") + std::string(magic));
  } else if (detected.format == Format::kUnknown || (detected.format == Format::kText && ext != "txt")) {
    // Undeclared, or the generic text/plain that clients send for .md files.
    const Detected by_ext = FromExtension(ext, &refusal);
    if (!refusal.empty()) return Status::Unsupported(refusal);
    if (by_ext.format != Format::kUnknown) detected = by_ext;
    if (detected.format == Format::kUnknown)
      detected.format = LooksLikeHtml(bytes) ? Format::kHtml : Format::kText;
  }
  if (detected.format == Format::kPdf && !is_pdf)
    return Status::InvalidArgument("not a PDF: the %PDF- header is missing");
  if (detected.format == Format::kZip && !is_zip) {
    return Status::InvalidArgument("not a " + std::string(internal::ZipFormatName(detected.zip)) +
                                   " document: the ZIP header is missing");
  }

  ExtractedDocument doc;
  std::string title;
  switch (detected.format) {
    case Format::kPdf: {
      auto pdf = internal::ExtractPdf(bytes);
      if (!pdf.ok()) return pdf.status();
      // PDF text has no encoding promise; hold it to the same UTF-8 rule.
      doc.text = NormalizeText(RepairUtf8(pdf->text), /*keep_form_feeds=*/true);
      title = CollapseSpaces(RepairUtf8(pdf->title));
      doc.media_type = kMediaPdf;
      break;
    }
    case Format::kZip: {
      auto office = internal::ExtractZipDocument(bytes, detected.zip, options.max_unpacked_bytes);
      if (!office.ok()) return office.status();
      doc.text = NormalizeText(RepairUtf8(office->text));
      title = CollapseSpaces(RepairUtf8(office->title));
      doc.media_type = office->media_type;
      break;
    }
    case Format::kHtml: {
      auto text = DecodeText(bytes, charset, options);
      if (!text.ok()) return text.status();
      auto html = internal::ExtractHtml(*text);
      if (!html.ok()) return html.status();
      // The input is valid UTF-8, yet the parser's output was once found
      // not to be (fuzzing, tests/data/corpus/fuzz/): hold it to the rule.
      doc.text = NormalizeText(RepairUtf8(html->text));
      title = CollapseSpaces(RepairUtf8(html->title));
      doc.media_type = kMediaHtml;
      break;
    }
    case Format::kCsv: {
      auto text = DecodeText(bytes, charset, options);
      if (!text.ok()) return text.status();
      // A quote left open: the rows cannot be told apart, so the text is kept as it is.
      auto csv = internal::ExtractCsv(*text, detected.csv_separator);
      doc.text = NormalizeText(csv.ok() ? csv->text : *text);
      doc.media_type = csv.ok() ? kMediaCsv : kMediaPlainText;
      break;
    }
    case Format::kMarkdown:
    case Format::kText:
    case Format::kUnknown: {
      auto text = DecodeText(bytes, charset, options);
      if (!text.ok()) return text.status();
      doc.text = NormalizeText(*text);
      if (detected.format == Format::kMarkdown) title = MarkdownTitle(doc.text);
      doc.media_type = detected.format == Format::kMarkdown ? kMediaMarkdown : kMediaPlainText;
      break;
    }
  }
  if (Trim(doc.text).empty()) {
    return Status::InvalidArgument("empty document: no text left after extraction");
  }
  if (title.empty()) title = Stem(file_name);
  if (title.empty()) title = FirstLine(doc.text);
  if (title.empty()) title = "Untitled";
  if (title.size() > kMaxTitleBytes) {
    title.resize(CompleteUtf8Prefix(std::string_view(title).substr(0, kMaxTitleBytes)));
  }
  doc.title = std::move(title);
  return doc;
}

}  // namespace ragd::corpus
