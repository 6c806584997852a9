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
  void Stop();  // stops accepting requests, finishes the loader and running work

  int port() const { return http_ ? http_->port() : 0; }

 private:
  void LoadModels();
  Status LoadModelsOrFail();

  ServeOptions options_;
  AppContext ctx_;
  std::unique_ptr<HttpServer> http_;
  std::thread loader_;
};

}  // namespace ragd::app
