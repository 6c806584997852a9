// Internal: the format-specific halves of Extract (see extract.h). Each keeps
// its third-party parser inside its own translation unit.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "corpus/extract.h"

namespace ragd::corpus::internal {

struct FormatText {
  std::string text;        // UTF-8, may still hold \r or stray control bytes
  std::string title;       // empty when the format names none
  std::string media_type;  // set by ExtractZipDocument: the format it found (kMedia*)
};

// Elements nested deeper than this are refused: the HTML parser's cost grows
// with the square of the nesting depth.
inline constexpr int kMaxHtmlDepth = 1024;

// Visible text of an HTML document given as valid UTF-8 (extract_html.cpp).
// kInvalidArgument when elements nest deeper than kMaxHtmlDepth.
Result<FormatText> ExtractHtml(std::string_view html);

// Page texts of a PDF joined by blank lines; title from the document info
// (extract_pdf.cpp). kInvalidArgument when unreadable, kUnsupported when encrypted.
Result<FormatText> ExtractPdf(std::string_view bytes);

// The ZIP-packaged document formats (extract_office.cpp).
enum class ZipFormat { kUnknown, kDocx, kOdt, kPptx, kEpub };
std::string_view ZipFormatName(ZipFormat format);  // "DOCX", ...; "ZIP" for kUnknown

// Text of a DOCX, ODT, PPTX or EPUB file, recognised by what the archive
// holds; `expected` (from the name or declared type) must agree when known.
// Reads at most `max_unpacked` bytes out of the archive in all. Errors:
// kInvalidArgument (not a ZIP, damaged, malformed XML), kUnsupported (another
// kind of archive: spreadsheets, other OpenDocument types; encrypted),
// kOutOfRange (unpacks past max_unpacked).
Result<FormatText> ExtractZipDocument(std::string_view bytes, ZipFormat expected, size_t max_unpacked);

// `bytes` in `charset` (an iconv name: "UTF-16LE", "WINDOWS-1252") as UTF-8;
// a sequence the charset does not define becomes U+FFFD (extract_text.cpp).
// kUnsupported when iconv does not know the charset.
Result<std::string> ConvertToUtf8(std::string_view bytes, const std::string& charset);

// CSV (RFC 4180: quoted fields may hold separators, quotes and line breaks)
// as text rows: each data row becomes one line "header: value; header: value"
// (empty values left out), so that every row reads on its own in a chunk.
// `separator` 0 picks the most frequent of , ; and tab in the first line.
// kInvalidArgument when a quote is left open (extract_text.cpp).
Result<FormatText> ExtractCsv(std::string_view utf8, char separator);

}  // namespace ragd::corpus::internal
