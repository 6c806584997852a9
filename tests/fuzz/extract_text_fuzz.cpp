// Plain text and Markdown uploads through corpus::Extract: encoding repair,
// binary detection, line ends, titles. The first byte picks how the upload is
// named (.txt, .md, no name and no type: sniffed), the rest is the file.
#include <cstdint>

#include "tests/fuzz/extract_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kNames[] = {"notes.txt", "guide.md", ""};
  ragd::fuzz::FuzzExtract(data + 1, size - 1, kNames[data[0] % 3], "");
  return 0;
}
