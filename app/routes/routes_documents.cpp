// Documents (admin): upload (multipart or JSON), list, show, delete.
#include <chrono>
#include <ctime>

#include "app/http/multipart.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

Json DocumentJson(const corpus::DocumentInfo& d) {
  return {{"id", d.id},
          {"title", d.title},
          {"source", d.source_name},
          {"media_type", d.media_type},
          {"bytes", d.byte_size},
          {"chunks", d.chunk_count},
          {"sha256", d.sha256},
          {"created_at", d.created_at}};
}

Result<int64_t> DocumentId(const HttpRequest& req) {
  const std::string& s = req.params.at("id");
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return Status::InvalidArgument("document id must be a positive number");
  return std::stoll(s);
}

struct Upload {
  std::string bytes;  // owned copy: ingestion runs after the request is gone
  std::string file_name;
  std::string media_type;
  std::string title;
};

Result<Upload> ReadUpload(const HttpRequest& req, const Config& config) {
  const std::string content_type = req.Header("content-type");
  Upload up;
  if (content_type.rfind("multipart/", 0) == 0) {
    auto boundary = MultipartBoundary(content_type);
    if (!boundary.ok()) return boundary.status();
    auto parts = ParseMultipart(req.body, *boundary);
    if (!parts.ok()) return parts.status();
    bool have_file = false;
    for (const FormPart& p : *parts) {
      if (p.name == "file" && !have_file) {
        have_file = true;
        up.bytes.assign(p.data);
        up.file_name = p.filename.empty() ? "upload" : p.filename;
        if (p.content_type != "application/octet-stream") up.media_type = p.content_type;
      } else if (p.name == "title") {
        up.title.assign(p.data);
      }
    }
    if (!have_file) return Status::InvalidArgument("multipart upload needs a 'file' field");
  } else {
    auto body = ParseJsonObject(req.body);
    if (!body.ok()) return body.status();
    auto title = RequiredString(*body, "title", 1024);
    if (!title.ok()) return title.status();
    auto text = RequiredString(*body, "text", static_cast<size_t>(config.retrieval.max_document_bytes));
    if (!text.ok()) return text.status();
    up.title = *title;
    up.bytes = *text;
    up.file_name = *title;
    up.media_type = "text/plain";
  }
  return up;
}

}  // namespace

void RegisterDocumentRoutes(HttpServer& http, AppContext& ctx) {
  http.Route(
      "POST", "/v1/documents",
      WithUser(
          ctx, Access::kAdmin, true, [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User&) {
            auto upload = ReadUpload(req, ctx.config);
            if (!upload.ok()) return ErrorResponse(upload.status());
            // Ingestion embeds every chunk: seconds of work, done off the reactor thread.
            auto response = ex.Defer();
            auto up = std::make_shared<Upload>(std::move(upload).value());
            RequestRecord record;
            record.request_id = ex.request_id();
            record.user_id = req.user_id;
            record.route = req.route;
            ctx.ingest_queue->Post([&ctx, response, up, record]() mutable {
              const auto t0 = std::chrono::steady_clock::now();
              auto result = ctx.retriever->Ingest(up->bytes, up->file_name, up->media_type, up->title);
              const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              HttpResponse r;
              if (!result.ok()) {
                r = ErrorResponse(result.status());
                if (result.status().code() == StatusCode::kUnsupported)
                  r = HttpResponse::Error(415, "invalid_request_error", result.status().message());
              } else if (auto doc = ctx.retriever->store().GetDocument(result->document_id); !doc.ok()) {
                r = ErrorResponse(doc.status());
              } else {
                r = JsonResponse(result->inserted ? 201 : 200, {{"document", DocumentJson(*doc)},
                                                                {"duplicate", !result->inserted},
                                                                {"ingest_seconds", s}});
              }
              response->Send(r);
              record.time = static_cast<int64_t>(::time(nullptr));
              record.status = r.status;
              record.duration_ms = s * 1000;
              RecordRequest(ctx, record);
            });
            return HttpResponse::Json(202, "");
          }));

  http.Route(
      "GET", "/v1/documents",
      WithUser(ctx, Access::kAdmin, true, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        auto docs = ctx.retriever->store().ListDocuments();
        if (!docs.ok()) return ErrorResponse(docs.status());
        Json list = Json::array();
        for (const auto& d : *docs) list.push_back(DocumentJson(d));
        return JsonResponse(200, {{"documents", list}});
      }));

  http.Route("GET", "/v1/documents/:id",
             WithUser(ctx, Access::kAdmin, true,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
                        auto id = DocumentId(req);
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto doc = ctx.retriever->store().GetDocument(*id);
                        if (!doc.ok()) return ErrorResponse(doc.status());
                        auto text = ctx.retriever->store().GetDocumentText(*id);
                        if (!text.ok()) return ErrorResponse(text.status());
                        return JsonResponse(200, {{"document", DocumentJson(*doc)}, {"text", *text}});
                      }));

  http.Route(
      "DELETE", "/v1/documents/:id",
      WithUser(ctx, Access::kAdmin, true,
               [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
                 auto id = DocumentId(req);
                 if (!id.ok()) return ErrorResponse(id.status());
                 auto removed = ctx.retriever->DeleteDocument(*id);
                 if (!removed.ok()) return ErrorResponse(removed.status());
                 return JsonResponse(200, {{"deleted", true}, {"id", *id}, {"chunks_removed", *removed}});
               }));
}

}  // namespace ragd::app
