// `ragd serve`
#include <semaphore.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/server/server.h"

namespace ragd::app {
namespace {

// The stop signal, from a handler: threads that libraries started before
// main (OpenBLAS starts its pool at load) do not block signals, so a
// process-directed SIGINT may land on any of them; with a handler installed
// it runs there instead of killing the process, and wakes main.
sem_t stop_semaphore;
volatile std::sig_atomic_t stop_signal = 0;

void OnStopSignal(int sig) {
  stop_signal = sig;
  sem_post(&stop_semaphore);  // async-signal-safe
}

// Whether a second stop signal comes within `wait` (false after it).
bool StopSignalWithin(std::chrono::milliseconds wait) {
  timespec until{};
  ::clock_gettime(CLOCK_REALTIME, &until);  // sem_timedwait's clock
  const long long ns = until.tv_nsec + static_cast<long long>(wait.count()) * 1000000;
  until.tv_sec += static_cast<time_t>(ns / 1000000000);
  until.tv_nsec = static_cast<long>(ns % 1000000000);
  while (sem_timedwait(&stop_semaphore, &until) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

// Behind a load balancer a replica being replaced finishes what it has
// begun: it stops taking new work at once (so the balancer takes it out) and
// waits for the requests already running, up to `bound` or a second signal.
void Drain(RagServer& server, std::chrono::seconds bound) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto requests = [](size_t n) { return n == 1 ? "request" : "requests"; };
  server.BeginDrain();
  const size_t running = server.RequestsInFlight();
  std::printf(
      "ragd: %s received, shutting down: draining %zu running %s (at most %lld s; a second signal "
      "stops at once)\n",
      stop_signal == SIGINT ? "SIGINT" : "SIGTERM", running, requests(running),
      static_cast<long long>(bound.count()));
  std::fflush(stdout);
  const char* why = "all finished";
  while (server.RequestsInFlight() > 0) {
    if (Clock::now() - start >= bound) {
      why = "server.drain_timeout_s reached";
      break;
    }
    if (StopSignalWithin(std::chrono::milliseconds(50))) {
      why = "second signal";
      break;
    }
  }
  const size_t left = server.RequestsInFlight();
  std::printf("ragd: drain ended after %.1f s (%s): %zu %s still running%s\n",
              std::chrono::duration<double>(Clock::now() - start).count(), why, left, requests(left),
              left > 0 ? ", cancelling them" : "");
  std::fflush(stdout);
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  Flags flags("ragd serve [--config FILE] [--host H] [--port P] [--data DIR] [--set key=value]...",
              "Runs the ragd HTTP server until SIGINT or SIGTERM, then drains the running requests\n"
              "(server.drain_timeout_s) and exits; a second signal stops at once.");
  AddConfigFlags(flags);
  flags.Value("--ingest-if-empty", "", "folder of documents to ingest when the corpus is empty");
  if (auto code = ParseOrExit(flags, args)) return *code;
  auto config = ConfigFromFlags(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "ragd serve: %s\n", config.status().message().c_str());
    return 2;
  }

  // The server's threads block the stop signals (they inherit this mask);
  // this thread takes them once the server runs.
  sem_init(&stop_semaphore, 0, 0);
  struct sigaction on_stop = {};
  on_stop.sa_handler = OnStopSignal;
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGINT, &on_stop, nullptr);
  sigaction(SIGTERM, &on_stop, nullptr);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  ServeOptions serve_options;
  serve_options.ingest_if_empty = flags.Get("--ingest-if-empty").value_or("");
  RagServer server(*config, serve_options);
  Status st = server.Start();
  if (!st.ok()) {
    std::fprintf(stderr, "ragd serve: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("ragd: listening on http://%s:%d/  (data in %s)\n", config->server.host.c_str(), server.port(),
              config->data_dir.c_str());
  std::fflush(stdout);

  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  while (sem_wait(&stop_semaphore) != 0 && errno == EINTR) {
  }
  Drain(server, std::chrono::seconds(config->server.drain_timeout_s));
  server.Stop();
  return 0;
}

}  // namespace ragd::app
