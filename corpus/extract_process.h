// Extraction contained in a child process, for bytes nobody vouches for.
//
// Parsers of PDF, HTML and office files are large C and C++ code bases fed
// with attacker-chosen bytes. Run in the server, a document that makes one
// loop for minutes, allocate without end or crash takes the server with it.
// ExtractContained runs Extract (extract.h) in a child process instead, with
// limits the kernel enforces:
//   CPU time      RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
//   memory        RLIMIT_AS, counted above what the child holds once started
//   wall clock    the parent kills the child at the deadline (a child that
//                 sleeps or blocks uses no CPU time)
//   output        extracted text above max_output_bytes is refused
//   files         RLIMIT_FSIZE 0 (no file is written), RLIMIT_NOFILE small,
//                 RLIMIT_NPROC 0 for unprivileged users, RLIMIT_CORE 0; the child inherits
//                 no descriptor but its one socket (closefrom), no environment
//                 variable but a few harmless ones (the server's may hold
//                 secrets), and dies with the thread that started it
//                 (PR_SET_PDEATHSIG).
//   system calls  a seccomp filter (syscall_filter.h): no program started,
//                 no process forked, no socket, no file opened for writing
//                 or changed, no signal to another process.
// The child is started with posix_spawn (vfork semantics: no copy of the
// parent's page tables, which hold the mapped models) and is a program of
// the caller's choosing that calls ExtractWorkerMain (`ragd extract-worker`
// in the server). Setting the limits and the filter is the first thing it
// does after reading the fixed-size request header, before a byte of the
// document is read.
//
// Wire format, over one Unix stream socket that is the child's stdin and
// stdout (integers are host-order, both ends being one binary on one machine):
//   request:  "RGX1", u64 cpu_seconds, u64 memory_bytes, u64 max_output_bytes,
//             u64 body_length, then the body: u64 ExtractOptions::max_bytes,
//             u64 max_unpacked_bytes, f64 max_invalid_utf8_fraction,
//             f64 max_control_fraction, and
//             three strings (u64 length + bytes): file name, declared media
//             type, document bytes.
//   response: u8 1 then strings text, title, media type; or u8 0, u8 status
//             code, string message. The child then exits 0. Exit code 3: it
//             ran out of memory (std::bad_alloc); 4: it could not set its
//             CPU or memory limit, and read nothing.
//
// Errors besides Extract's own: kResourceExhausted when a limit stopped the
// extraction (the message names the limit), kCancelled when `cancel` became
// true, kInternal when the child could not be started or broke the protocol.
//
// Thread-safety: ExtractContained may be called from many threads at once;
// each call has its own child.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "corpus/extract.h"

namespace ragd::corpus {

struct ContainmentOptions {
  // argv of the worker program (argv[0] a path); empty: extract in this process, without limits.
  std::vector<std::string> worker_command;
  int cpu_seconds = 30;                     // CPU time the child may use
  int64_t memory_bytes = int64_t{1} << 30;  // address space the child may add to its start-up size
  int64_t max_output_bytes = 64 << 20;      // largest extracted text
  double wall_seconds = 120;                // the child is killed after this long
};

// Extract (extract.h) in a child process under `containment`'s limits, or in
// this process when containment.worker_command is empty. `cancel`, when set,
// is polled while the child runs; a cancelled child is killed.
Result<ExtractedDocument> ExtractContained(std::string_view bytes, std::string_view file_name,
                                           std::string_view declared_media_type,
                                           const ExtractOptions& options,
                                           const ContainmentOptions& containment,
                                           const std::atomic<bool>* cancel = nullptr);

using ExtractFunction = Result<ExtractedDocument> (*)(std::string_view bytes, std::string_view file_name,
                                                      std::string_view declared_media_type,
                                                      const ExtractOptions& options);

// The child's side: reads one request from `in_fd`, applies its limits,
// extracts with `extract` (tests pass misbehaving ones) and writes the
// response to `out_fd`. Returns the exit code.
int ExtractWorkerMain(int in_fd, int out_fd, ExtractFunction extract = &Extract);

}  // namespace ragd::corpus
