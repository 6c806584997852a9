// RagServer: owns the models, the corpus and the HTTP routes of one ragd
// process. Construct, Start(), and later Stop(); readiness is reported on
// /readyz once the models are loaded (loading runs on a background thread so
// /healthz answers at once).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "app/config.h"
#include "app/http_server.h"
#include "common/status.h"

namespace ragd::app {

class RagServer {
 public:
  explicit RagServer(Config config);
  ~RagServer();

  // Creates the data folder, binds the port and starts loading the models.
  Status Start();
  // Stops accepting requests and waits for the loader.
  void Stop();

  int port() const { return http_ ? http_->port() : 0; }
  bool ready() const { return ready_.load(); }

 private:
  void RegisterRoutes();
  void LoadModels();

  Config config_;
  std::unique_ptr<HttpServer> http_;
  std::thread loader_;
  std::atomic<bool> ready_{false};
  std::string load_error_;  // written by the loader before ready_/failed_ flip
  std::atomic<bool> failed_{false};
};

}  // namespace ragd::app
