// Text extraction: the bytes of an upload -> UTF-8 text, a title and a media type.
//
// Supported: plain text, Markdown (kept as is), HTML (visible text only; block
// elements become line breaks; h1-h6 become Markdown "#" lines so the chunker
// sees the heading structure), PDF (page texts joined by "\n\f\n": the form
// feed, whitespace to the chunker and the search, numbers the pages), CSV and
// TSV (one "header: value; ..." line per row), DOCX, ODT, PPTX and EPUB
// (paragraphs, headings as "#" lines, table rows as tab-separated lines,
// each slide under its title; see extract_office.cpp).
// Line endings are normalised to "\n" and a UTF-8 byte order mark is dropped.
//
// Encodings: UTF-8; UTF-16 with a byte order mark; a charset declared in the
// media type ("text/plain; charset=windows-1252"); text with no valid UTF-8
// sequence at all is read as Windows-1252 (ISO-8859-1's superset) when that
// defines every byte.
//
// Refusals (the message names the reason):
//   kOutOfRange     the input is larger than Options::max_bytes, or an
//                   archive unpacks to more than max_unpacked_bytes
//   kUnsupported    an unsupported format (declared type, extension, magic
//                   bytes or archive content: e.g. .xlsx, .doc, images,
//                   other archives) or binary content (NUL bytes or too many
//                   control bytes), encrypted PDF or office file
//   kInvalidArgument  invalid UTF-8 beyond repair (more than
//                   max_invalid_utf8_fraction of the bytes, and not
//                   Windows-1252), or nothing but whitespace after
//                   extraction, or an unreadable PDF, ZIP or XML part
// A few invalid UTF-8 bytes are replaced by U+FFFD.
//
// HTML nested deeper than 1024 elements is refused (kInvalidArgument): the
// parser's cost grows with the square of the depth. A charset declared inside
// HTML (<meta charset>) is not honoured; the rules above apply.
//
// Thread-safety: Extract is a pure function; call it from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ragd::corpus {

// Media types Extract produces.
inline constexpr std::string_view kMediaPlainText = "text/plain";
inline constexpr std::string_view kMediaMarkdown = "text/markdown";
inline constexpr std::string_view kMediaHtml = "text/html";
inline constexpr std::string_view kMediaPdf = "application/pdf";
inline constexpr std::string_view kMediaCsv = "text/csv";
inline constexpr std::string_view kMediaDocx =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
inline constexpr std::string_view kMediaOdt = "application/vnd.oasis.opendocument.text";
inline constexpr std::string_view kMediaPptx =
    "application/vnd.openxmlformats-officedocument.presentationml.presentation";
inline constexpr std::string_view kMediaEpub = "application/epub+zip";

struct ExtractOptions {
  // Largest accepted input, in bytes (before extraction).
  size_t max_bytes = 32u << 20;
  // Share of invalid UTF-8 bytes still repaired with U+FFFD; above it the input is refused.
  double max_invalid_utf8_fraction = 0.01;
  // Share of control bytes (other than \t \n \r \f) above which text is taken as binary.
  double max_control_fraction = 0.02;
  // Most bytes read out of a DOCX, ODT, PPTX or EPUB archive, all entries together.
  size_t max_unpacked_bytes = 256u << 20;
};

struct ExtractedDocument {
  std::string text;        // UTF-8, "\n" line ends, not empty
  std::string title;       // never empty (falls back to the file name, then "Untitled"); <= 200 bytes
  std::string media_type;  // one of the kMedia* constants
};

// `file_name` may be empty; `declared_media_type` may be empty or carry
// parameters ("text/html; charset=utf-8"); "application/octet-stream" counts as
// undeclared; other text/* types and JSON/XML/YAML read as plain text.
// Precedence: PDF and known binary magic bytes, then a declared type (a
// generic text/plain defers to the extension, so notes.md stays Markdown),
// then the extension, then sniffing (HTML markup, otherwise plain text).
// Unknown extensions with text content are read as plain text.
Result<ExtractedDocument> Extract(std::string_view bytes, std::string_view file_name,
                                  std::string_view declared_media_type = {},
                                  const ExtractOptions& options = {});

}  // namespace ragd::corpus
