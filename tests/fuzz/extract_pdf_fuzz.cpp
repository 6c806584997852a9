// PDF uploads through corpus::Extract, in process: poppler's parse and the
// page texts. (The server runs extraction in a contained child process; this
// target drives the same code without the containment, so that a crash or a
// runaway input is seen here first.)
#include <cstdint>

#include "tests/fuzz/extract_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ragd::fuzz::FuzzExtract(data, size, "report.pdf", "application/pdf");
  return 0;
}
