// Helpers shared by the libFuzzer targets in tests/fuzz/ (one *_fuzz.cpp per
// target; tests/fuzz/README.md says how to build and run them).
//
// A target checks more than "does not crash": each states the contract of the
// code it drives (FUZZ_CHECK), and a broken contract aborts, which libFuzzer
// records as a crash with the input that caused it.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace ragd::fuzz {

// Aborts with `what` when `cond` is false: a contract the fuzzed code broke.
#define FUZZ_CHECK(cond, what)                                                                    \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "%s:%d: contract broken: %s (%s)\n", __FILE__, __LINE__, #cond, what); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// An in-memory file whose path readers can open and map like a file on disk
// (the parsers under test take paths). One per target, rewritten per input:
// no disk traffic, and the mapping each Open makes sees exactly this input.
class MemoryFile {
 public:
  MemoryFile() {
    fd_ = memfd_create("ragd-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the contents with `bytes`; returns the path to open.
  const std::string& Write(const uint8_t* bytes, size_t size) {
    if (ftruncate(fd_, 0) != 0 || ftruncate(fd_, static_cast<off_t>(size)) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, bytes + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace ragd::fuzz
