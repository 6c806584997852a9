// `ragd serve`
#include <csignal>
#include <cstdio>

#include "app/cli/commands.h"
#include "app/config/config_flags.h"
#include "app/server/server.h"

namespace ragd::app {

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

  // Block the stop signals in every thread; this one waits for them below.
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

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::printf("ragd: %s received, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stdout);
  server.Stop();
  return 0;
}

}  // namespace ragd::app
