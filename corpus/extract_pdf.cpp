// PDF text through libpoppler-cpp.
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <memory>
#include <mutex>

#include "corpus/extract_formats.h"

namespace ragd::corpus::internal {
namespace {

std::string ToUtf8(const poppler::ustring& s) {
  const poppler::byte_array bytes = s.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

void SilencePoppler() {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr); });
}

}  // namespace

Result<FormatText> ExtractPdf(std::string_view bytes) {
  SilencePoppler();
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return Status::OutOfRange("PDF larger than 2 GiB");
  try {
    // poppler reads straight from `bytes`, which outlives `doc`.
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
    if (!doc) return Status::InvalidArgument("unreadable PDF (damaged or not a PDF)");
    if (doc->is_locked()) return Status::Unsupported("encrypted PDF (password protected)");
    FormatText out;
    out.title = ToUtf8(doc->get_title());
    for (int i = 0; i < doc->pages(); ++i) {
      // A form feed on a line of its own starts every page after the first,
      // also after an empty page, so that a passage's page is the number of
      // form feeds before it, plus one.
      if (i > 0) out.text += "\n\f\n";
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (!page) continue;
      // Content-stream order: physical layout would interleave the lines of
      // side-by-side columns.
      std::string text = ToUtf8(page->text(poppler::rectf(), poppler::page::raw_order_layout));
      while (!text.empty() &&
             (text.back() == '\n' || text.back() == ' ' || text.back() == '\f' || text.back() == '\r')) {
        text.pop_back();
      }
      out.text += text;
    }
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("unreadable PDF: ") + e.what());
  } catch (...) {
    return Status::InvalidArgument("unreadable PDF");
  }
}

}  // namespace ragd::corpus::internal
