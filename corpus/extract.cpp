#include "corpus/extract.h"

#include <algorithm>
#include <array>

#include "common/text.h"
#include "corpus/extract_formats.h"

namespace ragd::corpus {
namespace {

enum class Format { kUnknown, kText, kMarkdown, kHtml, kPdf };

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
Format FromDeclared(std::string_view declared, std::string* refusal) {
  std::string type = Lower(Trim(declared.substr(0, declared.find(';'))));
  if (type.empty() || type == "application/octet-stream") return Format::kUnknown;
  if (type == "text/markdown" || type == "text/x-markdown") return Format::kMarkdown;
  if (type == "text/html" || type == "application/xhtml+xml") return Format::kHtml;
  if (type == "application/pdf") return Format::kPdf;
  // Other text types (text/csv, JSON, XML, YAML) are read as plain text.
  if (type.starts_with("text/") || type == "application/json" || type == "application/xml" ||
      type == "application/x-yaml" || type == "application/yaml" || type == "application/x-ndjson" ||
      type == "application/toml") {
    return Format::kText;
  }
  *refusal = "unsupported media type '" + type + "' (supported: plain text, Markdown, HTML, PDF)";
  return Format::kUnknown;
}

Format FromExtension(const std::string& ext, std::string* refusal) {
  static constexpr std::array<std::string_view, 18> kText = {"txt",   "text", "log", "csv",  "tsv", "json",
                                                             "jsonl", "yaml", "yml", "toml", "ini", "cfg",
                                                             "conf",  "rst",  "xml", "tex",  "srt", "vtt"};
  static constexpr std::array<std::string_view, 32> kRefused = {
      "docx", "doc", "xlsx", "xls", "pptx", "ppt",  "odt", "ods",  "odp", "rtf",  "epub",
      "png",  "jpg", "jpeg", "gif", "bmp",  "webp", "tif", "tiff", "ico", "heic", "zip",
      "gz",   "tgz", "bz2",  "xz",  "7z",   "rar",  "tar", "exe",  "mp3", "mp4"};
  if (ext.empty()) return Format::kUnknown;
  if (ext == "md" || ext == "markdown" || ext == "mdown" || ext == "mkd") return Format::kMarkdown;
  if (ext == "html" || ext == "htm" || ext == "xhtml") return Format::kHtml;
  if (ext == "pdf") return Format::kPdf;
  if (std::find(kText.begin(), kText.end(), ext) != kText.end()) return Format::kText;
  if (std::find(kRefused.begin(), kRefused.end(), ext) != kRefused.end()) {
    *refusal = "unsupported file type '." + ext + "' (supported: plain text, Markdown, HTML, PDF)";
  }
  return Format::kUnknown;
}

// Names a well-known binary container from its first bytes, "" when none.
std::string_view BinaryMagic(std::string_view b) {
  struct Magic {
    std::string_view prefix, name;
  };
  static constexpr Magic kMagics[] = {
      {"PK\x03\x04", "a ZIP archive (e.g. .docx, .xlsx, .odt, .epub)"},
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

// Checks that `bytes` is text and returns it as valid UTF-8 without a BOM.
Result<std::string> DecodeText(std::string_view bytes, const ExtractOptions& options) {
  if (bytes.starts_with("\xFF\xFE") || bytes.starts_with("\xFE\xFF")) {
    return Status::Unsupported("UTF-16 text is not supported; save the file as UTF-8");
  }
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
  size_t control = 0;
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return Status::Unsupported("binary content (NUL bytes); not a text document");
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) ++control;
  }
  if (static_cast<double>(control) > options.max_control_fraction * static_cast<double>(bytes.size())) {
    return Status::Unsupported("binary content (" + std::to_string(control) + " control bytes in " +
                               std::to_string(bytes.size()) + "); not a text document");
  }
  if (IsValidUtf8(bytes)) return std::string(bytes);
  std::string repaired = RepairUtf8(bytes);
  // Each invalid byte became one U+FFFD; subtract the ones that were there before.
  const size_t invalid = CountOccurrences(repaired, "\xEF\xBF\xBD") - CountOccurrences(bytes, "\xEF\xBF\xBD");
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
  Format format = FromDeclared(declared_media_type, &refusal);
  if (!refusal.empty()) return Status::Unsupported(refusal);
  const std::string ext = Extension(file_name);
  // The PDF header may follow a little junk, but only a file claimed to be a
  // PDF is searched for it (text about PDFs may quote it).
  const Format by_ext_hint = FromExtension(ext, &refusal);
  refusal.clear();
  const bool claims_pdf = format == Format::kPdf || by_ext_hint == Format::kPdf;
  const bool is_pdf = bytes.starts_with("%PDF-") ||
                      (claims_pdf && bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos);
  if (is_pdf) {
    format = Format::kPdf;
  } else if (const std::string_view magic = BinaryMagic(bytes); !magic.empty()) {
    return Status::Unsupported(std::string("unsupported format: ") + std::string(magic));
  } else if (format == Format::kUnknown || (format == Format::kText && ext != "txt")) {
    // Undeclared, or the generic text/plain that clients send for .md files.
    const Format by_ext = FromExtension(ext, &refusal);
    if (!refusal.empty()) return Status::Unsupported(refusal);
    if (by_ext == Format::kPdf) return Status::InvalidArgument("not a PDF: the %PDF- header is missing");
    if (by_ext != Format::kUnknown) format = by_ext;
    if (format == Format::kUnknown) format = LooksLikeHtml(bytes) ? Format::kHtml : Format::kText;
  }
  if (format == Format::kPdf && !is_pdf)
    return Status::InvalidArgument("not a PDF: the %PDF- header is missing");

  ExtractedDocument doc;
  std::string title;
  switch (format) {
    case Format::kPdf: {
      auto pdf = internal::ExtractPdf(bytes);
      if (!pdf.ok()) return pdf.status();
      // PDF text has no encoding promise; hold it to the same UTF-8 rule.
      doc.text = NormalizeText(RepairUtf8(pdf->text), /*keep_form_feeds=*/true);
      title = CollapseSpaces(RepairUtf8(pdf->title));
      doc.media_type = kMediaPdf;
      break;
    }
    case Format::kHtml: {
      auto text = DecodeText(bytes, options);
      if (!text.ok()) return text.status();
      auto html = internal::ExtractHtml(*text);
      if (!html.ok()) return html.status();
      doc.text = NormalizeText(html->text);
      title = CollapseSpaces(html->title);
      doc.media_type = kMediaHtml;
      break;
    }
    case Format::kMarkdown:
    case Format::kText:
    case Format::kUnknown: {
      auto text = DecodeText(bytes, options);
      if (!text.ok()) return text.status();
      doc.text = NormalizeText(*text);
      if (format == Format::kMarkdown) title = MarkdownTitle(doc.text);
      doc.media_type = format == Format::kMarkdown ? kMediaMarkdown : kMediaPlainText;
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
