// Helper process for extract_process_test: an extraction worker whose
// extractor misbehaves on request, chosen by the file name, so each limit of
// ExtractContained is met for certain.
//   spin.*    loops on the CPU          sleep.*   blocks without using CPU
//   grab.*    allocates without end     crash.*   dies on SIGSEGV
//   flood.*   returns 8 MiB of text     env.*     returns $RAGD_TEST_SECRET
//   other     corpus::Extract
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "corpus/extract_process.h"

namespace {

using ragd::Result;
using ragd::corpus::ExtractedDocument;
using ragd::corpus::ExtractOptions;

Result<ExtractedDocument> Misbehave(std::string_view bytes, std::string_view file_name,
                                    std::string_view media_type, const ExtractOptions& options) {
  if (file_name.starts_with("spin.")) {
    volatile unsigned long n = 0;
    for (;;) n = n + 1;
  }
  if (file_name.starts_with("sleep.")) {
    for (;;) ::pause();
  }
  if (file_name.starts_with("grab.")) {
    std::vector<std::vector<char>> held;
    for (;;) {
      held.emplace_back(16 << 20);
      std::memset(held.back().data(), 1, held.back().size());
    }
  }
  if (file_name.starts_with("crash.")) ::raise(SIGSEGV);
  if (file_name.starts_with("env.")) {
    const char* secret = std::getenv("RAGD_TEST_SECRET");
    return ExtractedDocument{secret != nullptr ? secret : "(unset)", "t", "text/plain"};
  }
  if (file_name.starts_with("flood.")) return ExtractedDocument{std::string(8 << 20, 'x'), "t", "text/plain"};
  return ragd::corpus::Extract(bytes, file_name, media_type, options);
}

}  // namespace

int main() { return ragd::corpus::ExtractWorkerMain(0, 1, &Misbehave); }
