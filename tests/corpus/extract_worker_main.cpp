// Helper process for extract_process_test: an extraction worker whose
// extractor misbehaves on request, chosen by the file name, so each limit of
// ExtractContained is met for certain.
//   spin.*    loops on the CPU          sleep.*   blocks without using CPU
//   grab.*    allocates without end     crash.*   dies on SIGSEGV
//   flood.*   returns 8 MiB of text     env.*     returns $RAGD_TEST_SECRET
//   escape.*  tries to run a program, write a file, open a socket and fork,
//             and reports how each attempt ended
//   other     corpus::Extract
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
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
  if (file_name.starts_with("escape.")) {
    auto outcome = [](const char* what, bool ok) {
      return std::string(what) + (ok ? ": done\n" : ": " + std::string(std::strerror(errno)) + "\n");
    };
    std::string report = outcome("exec", ::execl("/bin/true", "true", static_cast<char*>(nullptr)) == 0);
    const int fd = ::open("/tmp/ragd-escape-test", O_CREAT | O_WRONLY, 0600);
    report += outcome("create", fd >= 0);
    report += outcome("socket", ::socket(AF_INET, SOCK_STREAM, 0) >= 0);
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    report += outcome("fork", pid > 0);
    report += outcome("read", ::open("/proc/self/statm", O_RDONLY) >= 0);
    return ExtractedDocument{report, "t", "text/plain"};
  }
  if (file_name.starts_with("env.")) {
    const char* secret = std::getenv("RAGD_TEST_SECRET");
    return ExtractedDocument{secret != nullptr ? secret : "(unset)", "t", "text/plain"};
  }
  if (file_name.starts_with("flood.")) return ExtractedDocument{std::string(8 << 20, 'x'), "t", "text/plain"};
  return ragd::corpus::Extract(bytes, file_name, media_type, options);
}

}  // namespace

int main() { return ragd::corpus::ExtractWorkerMain(0, 1, &Misbehave); }
