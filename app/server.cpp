#include "app/server.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/model_info.h"
#include "inference/gguf.h"
#include "retrieval/safetensors.h"

namespace ragd::app {

RagServer::RagServer(Config config) : config_(std::move(config)) {}

RagServer::~RagServer() { Stop(); }

Status RagServer::Start() {
  std::error_code ec;
  std::filesystem::create_directories(config_.data_dir, ec);
  if (ec) return Status::IoError("cannot create data folder " + config_.data_dir + ": " + ec.message());

  HttpServerOptions opts;
  opts.host = config_.server.host;
  opts.port = static_cast<int>(config_.server.port);
  opts.threads = static_cast<int>(config_.server.threads);
  opts.max_request_bytes = static_cast<size_t>(std::max(config_.server.max_json_bytes, config_.server.max_upload_bytes));
  opts.stream_timeout_s = static_cast<int>(config_.server.stream_timeout_s);
  http_ = std::make_unique<HttpServer>(opts);
  RegisterRoutes();
  RAGD_RETURN_IF_ERROR(http_->Start());
  loader_ = std::thread([this] { LoadModels(); });
  return Status::Ok();
}

void RagServer::Stop() {
  if (http_) http_->Shutdown();
  if (loader_.joinable()) loader_.join();
}

void RagServer::LoadModels() {
  auto llm = inference::GgufFile::Open(config_.LlmPath());
  if (!llm.ok()) {
    load_error_ = llm.status().message();
    failed_ = true;
    std::fprintf(stderr, "ragd: cannot load the language model: %s\n", load_error_.c_str());
    return;
  }
  auto emb = retrieval::SafetensorsFile::Open(config_.EmbeddingPath() + "/model.safetensors");
  if (!emb.ok()) {
    load_error_ = emb.status().message();
    failed_ = true;
    std::fprintf(stderr, "ragd: cannot load the embedding model: %s\n", load_error_.c_str());
    return;
  }
  ready_ = true;
}

void RagServer::RegisterRoutes() {
  http_->Route("GET", "/healthz", [](const HttpRequest&, const StreamStarter&) {
    return HttpResponse::Json(200, R"({"status":"ok"})");
  });
  http_->Route("GET", "/readyz", [this](const HttpRequest&, const StreamStarter&) {
    if (ready_) return HttpResponse::Json(200, R"({"status":"ok"})");
    if (failed_) return HttpResponse::Error(503, "unavailable_error", "model failed to load: " + load_error_);
    return HttpResponse::Error(503, "unavailable_error", "loading models");
  });
}

}  // namespace ragd::app
