// HTML uploads through corpus::Extract: the gumbo parse, visible text,
// headings as Markdown lines, the nesting limit.
#include <cstdint>

#include "tests/fuzz/extract_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ragd::fuzz::FuzzExtract(data, size, "page.html", "text/html; charset=utf-8");
  return 0;
}
