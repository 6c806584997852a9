// `ragd serve`
#include <semaphore.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

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

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  Flags flags("ragd serve [--config FILE] [--host H] [--port P] [--data DIR] [--set key=value]...",
              "Runs the ragd HTTP server until SIGINT or SIGTERM.");
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
  std::printf("ragd: %s received, shutting down\n", stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stdout);
  server.Stop();
  return 0;
}

}  // namespace ragd::app
