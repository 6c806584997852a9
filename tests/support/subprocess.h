// Runs a program for black-box tests and captures its output. Header-only.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace ragd::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
};

inline std::string ReadAll(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

// Runs argv[0] with the arguments and waits. Output goes through temp files so
// large outputs cannot dead-lock the pipes.
inline ProcessResult RunProcess(const std::vector<std::string>& argv) {
  char out_tpl[] = "/tmp/ragd-out-XXXXXX", err_tpl[] = "/tmp/ragd-err-XXXXXX";
  const int out_fd = mkstemp(out_tpl), err_fd = mkstemp(err_tpl);
  ProcessResult r;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  lseek(out_fd, 0, SEEK_SET);
  lseek(err_fd, 0, SEEK_SET);
  r.out = ReadAll(out_fd);
  r.err = ReadAll(err_fd);
  close(out_fd);
  close(err_fd);
  unlink(out_tpl);
  unlink(err_tpl);
  return r;
}

// The ragd binary under test (set by CTest), and the real models folder.
inline std::string RagdBinary() {
  if (const char* b = std::getenv("RAGD_BINARY"); b != nullptr && *b != '\0') return b;
#ifdef RAGD_TEST_BINARY
  return RAGD_TEST_BINARY;
#else
  return "ragd";
#endif
}

}  // namespace ragd::testing
