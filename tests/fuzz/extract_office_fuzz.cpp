// Office and e-book uploads through corpus::Extract: DOCX, ODT, PPTX and EPUB
// (a ZIP archive of XML parts, libzip + libxml2) and CSV. The first byte picks
// the file name the upload arrives with, the rest is the file.
#include <cstdint>

#include "tests/fuzz/extract_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kNames[] = {"report.docx", "notes.odt", "slides.pptx", "book.epub", "table.csv"};
  ragd::fuzz::FuzzExtract(data + 1, size - 1, kNames[data[0] % 5], "");
  return 0;
}
