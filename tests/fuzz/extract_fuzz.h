// The contract of corpus::Extract (corpus/extract.h) that the extraction
// targets check on every input: an upload becomes clean UTF-8 text with a
// title, or an error value.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/text.h"
#include "corpus/extract.h"
#include "tests/fuzz/fuzz_support.h"

namespace ragd::fuzz {

inline void FuzzExtract(const uint8_t* data, size_t size, std::string_view file_name,
                        std::string_view declared_media_type) {
  auto doc = corpus::Extract(AsText(data, size), file_name, declared_media_type);
  if (!doc.ok()) {
    FUZZ_CHECK(!doc.status().message().empty(), "refusal without a reason");
    return;
  }
  FUZZ_CHECK(!doc->text.empty(), "empty text accepted");
  FUZZ_CHECK(IsValidUtf8(doc->text), "text is not valid UTF-8");
  FUZZ_CHECK(doc->text.find('\r') == std::string::npos, "line ends not normalised");
  FUZZ_CHECK(doc->text.find('\0') == std::string::npos, "NUL byte in the text");
  FUZZ_CHECK(!doc->title.empty() && doc->title.size() <= 200, "title length");
  FUZZ_CHECK(IsValidUtf8(doc->title), "title is not valid UTF-8");
  bool known = false;
  for (std::string_view m :
       {corpus::kMediaPlainText, corpus::kMediaMarkdown, corpus::kMediaHtml, corpus::kMediaPdf,
        corpus::kMediaCsv, corpus::kMediaDocx, corpus::kMediaOdt, corpus::kMediaPptx, corpus::kMediaEpub})
    known = known || doc->media_type == m;
  FUZZ_CHECK(known, "unknown media type");
}

}  // namespace ragd::fuzz
