// Internal: the format-specific halves of Extract (see extract.h). Each keeps
// its third-party parser inside its own translation unit.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace ragd::corpus::internal {

struct FormatText {
  std::string text;   // UTF-8, may still hold \r or stray control bytes
  std::string title;  // empty when the format names none
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

}  // namespace ragd::corpus::internal
