#include "corpus/extract_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <new>

#include "corpus/syscall_filter.h"

namespace ragd::corpus {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kMagic[4] = {'R', 'G', 'X', '1'};
constexpr size_t kHeaderBytes = 4 + 4 * 8;
constexpr int kExitOutOfMemory = 3;
constexpr int kExitNoLimits = 4;
constexpr int64_t kEnvelopeBytes = 1 << 20;  // room for the title, media type and framing

// --- framing -----------------------------------------------------------------

void PutU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutF64(std::string* out, double v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutString(std::string* out, std::string_view s) {
  PutU64(out, s.size());
  out->append(s);
}

// Reads framed values from a buffer; any read past the end fails from then on.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool U8(uint8_t* v) { return Raw(v, 1); }
  bool U64(uint64_t* v) { return Raw(v, sizeof *v); }
  bool F64(double* v) { return Raw(v, sizeof *v); }
  bool String(std::string_view* s) {
    uint64_t n = 0;
    if (!U64(&n) || n > data_.size() - pos_) return false;
    *s = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  bool Raw(void* v, size_t n) {
    if (data_.size() - pos_ < n) return false;
    std::memcpy(v, data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

bool ReadFull(int fd, char* buf, size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteFull(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

std::string Mib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

Status OutOfMemory(int64_t limit) {
  return Status::ResourceExhausted("extraction stopped: the document needed more memory than the limit of " +
                                   Mib(limit));
}

Status OutputTooLarge(int64_t limit) {
  return Status::ResourceExhausted("extraction stopped: the extracted text is larger than the limit of " +
                                   Mib(limit));
}

// --- child -------------------------------------------------------------------

// Virtual size of this process in bytes (first field of /proc/self/statm, in pages).
int64_t AddressSpaceBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

bool SetLimit(int resource, rlim_t soft, rlim_t hard) {
  const rlimit r{soft, hard};
  return ::setrlimit(resource, &r) == 0;
}

// False when the CPU or memory limit could not be set: the child then
// refuses to read the document rather than parse it unbounded.
bool ApplyLimits(uint64_t cpu_seconds, uint64_t memory_bytes) {
  SetLimit(RLIMIT_CORE, 0, 0);
  const rlim_t address_space = static_cast<rlim_t>(AddressSpaceBytes()) + memory_bytes;
  const bool bounded =
      SetLimit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1) && SetLimit(RLIMIT_AS, address_space, address_space);
  SetLimit(RLIMIT_FSIZE, 0, 0);
  SetLimit(RLIMIT_NOFILE, 32, 32);
  SetLimit(RLIMIT_NPROC, 0, 0);  // not enforced for root, which has CAP_SYS_RESOURCE
  return bounded;
}

std::string ErrorResponse(const Status& st) {
  std::string out(1, '\0');
  out += static_cast<char>(st.code());
  PutString(&out, st.message());
  return out;
}

// --- parent ------------------------------------------------------------------

// A started child; killed and reaped on destruction unless reaped before.
class Child {
 public:
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Reap();
    }
  }
  Status Start(const std::vector<std::string>& argv, int socket_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&actions, socket_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, socket_fd, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    // A clean signal state: the server blocks signals on its threads and ignores SIGPIPE.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // A bare environment: the server's may hold secrets (the admin password,
    // the log key), which a parser taken over by a document must not read.
    // One thread for any math library the worker binary links, since the
    // child only parses; the kernel choice and sanitizer settings pass on.
    std::vector<std::string> env_strings = {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"};
    for (const char* name : {"OPENBLAS_CORETYPE", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
      if (const char* value = std::getenv(name)) env_strings.push_back(std::string(name) + "=" + value);
    }
    std::vector<char*> env;
    for (std::string& e : env_strings) env.push_back(e.data());
    env.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &actions, &attr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      pid_ = 0;
      return Status::Internal("cannot start the extraction worker " + argv[0] + ": " + std::strerror(rc));
    }
    return Status::Ok();
  }
  void Kill() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  // Waits until `deadline` for the child to end; false (still running) after it.
  bool ReapBy(Clock::time_point deadline) {
    for (;;) {
      rusage ru{};
      const pid_t r = ::wait4(pid_, &status_, WNOHANG, &ru);
      if (r == pid_) {
        Reaped(ru);
        return true;
      }
      if (r < 0 && errno != EINTR) return false;
      if (Clock::now() >= deadline) return false;
      ::usleep(2000);
    }
  }
  // Waits for the child to end; its status and CPU seconds.
  void Reap() {
    rusage ru{};
    while (::wait4(pid_, &status_, 0, &ru) < 0 && errno == EINTR) {
    }
    Reaped(ru);
  }
  int status() const { return status_; }
  double cpu_seconds() const { return cpu_seconds_; }
  int64_t peak_resident_bytes() const { return peak_resident_bytes_; }

 private:
  void Reaped(const rusage& ru) {
    peak_resident_bytes_ = static_cast<int64_t>(ru.ru_maxrss) * 1024;
    cpu_seconds_ = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                   static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    pid_ = 0;
  }

  pid_t pid_ = 0;
  int status_ = 0;
  double cpu_seconds_ = 0;
  int64_t peak_resident_bytes_ = 0;
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

enum class Stop { kNone, kDeadline, kCancelled, kOutput };

// Why the exchange with the child ended early, if it did.
struct Exchange {
  std::string response;
  Stop stop = Stop::kNone;
};

// Sends the request and collects the response until the child closes its
// end, polling so the deadline and the cancel flag are honoured throughout.
Exchange Converse(int fd, std::string_view request, size_t max_response, Clock::time_point deadline,
                  const std::atomic<bool>* cancel) {
  Exchange ex;
  size_t sent = 0;
  char buf[1 << 16];
  for (;;) {
    if (cancel != nullptr && cancel->load()) {
      ex.stop = Stop::kCancelled;
      return ex;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ex.stop = Stop::kDeadline;
      return ex;
    }
    pollfd p{fd, static_cast<short>(POLLIN | (sent < request.size() ? POLLOUT : 0)), 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (n < 0 && errno != EINTR) return ex;
    if (n <= 0) continue;
    if ((p.revents & POLLOUT) != 0 && sent < request.size()) {
      const ssize_t w = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0)
        sent += static_cast<size_t>(w);
      else if (w < 0 && errno != EAGAIN && errno != EINTR)
        sent = request.size();  // the child is gone
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t r = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return ex;  // the child closed its end
      if (r > 0) {
        ex.response.append(buf, static_cast<size_t>(r));
        if (ex.response.size() > max_response) {
          ex.stop = Stop::kOutput;
          return ex;
        }
      }
    }
  }
}

}  // namespace

int ExtractWorkerMain(int in_fd, int out_fd, ExtractFunction extract) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // A parser that lets std::bad_alloc escape through code that cannot throw
  // ends in std::terminate: still the memory limit, and said so.
  std::set_terminate([] {
    try {
      if (std::current_exception()) std::rethrow_exception(std::current_exception());
    } catch (const std::bad_alloc&) {
      ::_exit(kExitOutOfMemory);
    } catch (...) {
    }
    std::abort();
  });
  char header[kHeaderBytes];
  if (!ReadFull(in_fd, header, sizeof header) || std::memcmp(header, kMagic, 4) != 0) return 2;
  uint64_t cpu = 0, memory = 0, max_output = 0, body_length = 0;
  Reader h(std::string_view(header + 4, sizeof header - 4));
  h.U64(&cpu);
  h.U64(&memory);
  h.U64(&max_output);
  h.U64(&body_length);
  if (!ApplyLimits(cpu, memory)) return kExitNoLimits;
  internal::DenyDangerousSyscalls();
  try {
    std::string body(body_length, '\0');
    if (!ReadFull(in_fd, body.data(), body.size())) return 2;
    Reader r(body);
    uint64_t max_bytes = 0, max_unpacked = 0;
    ExtractOptions options;
    std::string_view file_name, media_type, bytes;
    if (!r.U64(&max_bytes) || !r.U64(&max_unpacked) || !r.F64(&options.max_invalid_utf8_fraction) ||
        !r.F64(&options.max_control_fraction) || !r.String(&file_name) || !r.String(&media_type) ||
        !r.String(&bytes) || !r.done()) {
      return 2;
    }
    options.max_bytes = max_bytes;
    options.max_unpacked_bytes = max_unpacked;
    auto doc = extract(bytes, file_name, media_type, options);
    std::string out;
    if (!doc.ok()) {
      out = ErrorResponse(doc.status());
    } else if (doc->text.size() > max_output) {
      out = ErrorResponse(OutputTooLarge(static_cast<int64_t>(max_output)));
    } else {
      out.assign(1, '\1');
      PutString(&out, doc->text);
      PutString(&out, doc->title);
      PutString(&out, doc->media_type);
    }
    return WriteFull(out_fd, out) ? 0 : 2;
  } catch (const std::bad_alloc&) {
    return kExitOutOfMemory;
  }
}

Result<ExtractedDocument> ExtractContained(std::string_view bytes, std::string_view file_name,
                                           std::string_view declared_media_type,
                                           const ExtractOptions& options,
                                           const ContainmentOptions& containment,
                                           const std::atomic<bool>* cancel) {
  if (containment.worker_command.empty()) return Extract(bytes, file_name, declared_media_type, options);
  // The size refusal needs no child.
  if (bytes.size() > options.max_bytes) return Extract(bytes, file_name, declared_media_type, options);

  std::string body;
  PutU64(&body, options.max_bytes);
  PutU64(&body, options.max_unpacked_bytes);
  PutF64(&body, options.max_invalid_utf8_fraction);
  PutF64(&body, options.max_control_fraction);
  PutString(&body, file_name);
  PutString(&body, declared_media_type);
  PutString(&body, bytes);
  std::string request(kMagic, sizeof kMagic);
  PutU64(&request, static_cast<uint64_t>(std::max(1, containment.cpu_seconds)));
  PutU64(&request, static_cast<uint64_t>(std::max<int64_t>(1 << 20, containment.memory_bytes)));
  PutU64(&request, static_cast<uint64_t>(std::max<int64_t>(0, containment.max_output_bytes)));
  PutU64(&request, body.size());
  request += body;

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return Status::Internal(std::string("cannot create the extraction socket: ") + std::strerror(errno));
  Fd ours(sv[0]), theirs(sv[1]);
  Child child;
  RAGD_RETURN_IF_ERROR(child.Start(containment.worker_command, theirs.get()));
  theirs.Close();

  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(containment.wall_seconds * 1000));
  Exchange ex =
      Converse(ours.get(), request, static_cast<size_t>(containment.max_output_bytes + kEnvelopeBytes),
               deadline, cancel);
  ours.Close();
  // The child closes its end by exiting; one that closed it and lives on is
  // held to the same deadline.
  if (ex.stop == Stop::kNone && !child.ReapBy(deadline)) ex.stop = Stop::kDeadline;
  if (ex.stop != Stop::kNone) {
    child.Kill();
    child.Reap();
  }

  switch (ex.stop) {
    case Stop::kCancelled:
      return Status::Cancelled("extraction cancelled");
    case Stop::kDeadline:
      return Status::ResourceExhausted("extraction stopped: the document took longer than " +
                                       std::to_string(static_cast<int>(containment.wall_seconds)) +
                                       " s (the time limit)");
    case Stop::kOutput:
      return OutputTooLarge(containment.max_output_bytes);
    case Stop::kNone:
      break;
  }
  const int st = child.status();
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    if (sig == SIGXCPU || (sig == SIGKILL && child.cpu_seconds() >= containment.cpu_seconds))
      return Status::ResourceExhausted("extraction stopped: the document needed more than " +
                                       std::to_string(containment.cpu_seconds) +
                                       " s of CPU time (the limit)");
    // C libraries end on a failed allocation by abort() (poppler) or a null
    // pointer: a child that died holding most of its budget ran out of it.
    if (child.peak_resident_bytes() * 4 >= containment.memory_bytes * 3)
      return OutOfMemory(containment.memory_bytes);
    return Status::ResourceExhausted(
        "extraction failed: the parser stopped on signal " + std::to_string(sig) +
        " (a damaged document, or more memory than the limit of " + Mib(containment.memory_bytes) + ")");
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == kExitOutOfMemory) return OutOfMemory(containment.memory_bytes);
  if (WIFEXITED(st) && WEXITSTATUS(st) == kExitNoLimits)
    return Status::Internal("the extraction worker could not set its CPU and memory limits");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return Status::Internal("the extraction worker exited with status " + std::to_string(WEXITSTATUS(st)));

  Reader r(ex.response);
  uint8_t ok = 0;
  if (!r.U8(&ok)) return Status::Internal("the extraction worker sent no answer");
  if (ok == 0) {
    uint8_t code = 0;
    std::string_view message;
    if (!r.U8(&code) || !r.String(&message) || code == 0 ||
        code > static_cast<uint8_t>(StatusCode::kInternal))
      return Status::Internal("the extraction worker sent a malformed error");
    return Status(static_cast<StatusCode>(code), std::string(message));
  }
  std::string_view text, title, media_type;
  if (!r.String(&text) || !r.String(&title) || !r.String(&media_type) || !r.done())
    return Status::Internal("the extraction worker sent a malformed answer");
  ExtractedDocument doc;
  doc.text = std::string(text);
  doc.title = std::string(title);
  doc.media_type = std::string(media_type);
  return doc;
}

}  // namespace ragd::corpus
