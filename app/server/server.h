// RagServer: one ragd process. Owns the AppContext (accounts, models,
// retrieval, inference thread) and the HTTP routes.
//
// Start() opens the account store (creating the first admin and printing its
// generated credentials once), binds the port, and loads the models on a
// background thread, so /healthz answers at once and /readyz turns 200 when
// everything is loaded (and the sample corpus, if asked for, is ingested).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "app/http/http_server.h"
#include "app/services/app_context.h"

namespace ragd::app {

struct ServeOptions {
  std::string ingest_if_empty;  // folder to ingest when the corpus has no documents
};

class RagServer {
 public:
  RagServer(Config config, ServeOptions options);
  ~RagServer();

  Status Start();
  // Stops taking new work (a drain): /readyz answers 503 "draining" and the
  // routes that would start work refuse it, while the requests already
  // running, streams included, go on. Any thread.
  void BeginDrain();
  // Requests being answered now (handlers and unfinished responses).
  size_t RequestsInFlight() const { return http_ ? http_->InFlight() : 0; }
  // Cancels what still runs (each generation through its own handle; a
  // stream ends with an error event), then stops accepting requests and
  // finishes the loader and the background work. Idempotent.
  void Stop();

  int port() const { return http_ ? http_->port() : 0; }

 private:
  void LoadModels();
  Status LoadModelsOrFail();

  ServeOptions options_;
  AppContext ctx_;
  std::unique_ptr<HttpServer> http_;
  std::thread loader_;
  bool stopped_ = false;
};

}  // namespace ragd::app
