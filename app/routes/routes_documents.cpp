// Documents (admin): upload (multipart or JSON), list, show, delete; the
// upload jobs (list, show, cancel).
//
// An upload waits in ctx.ingest_jobs (bounded: 503 with Retry-After when
// full). By default the response comes when the document is in (201, or 200
// for a duplicate) and a client that disconnects cancels its upload; with
// "Prefer: respond-async" (RFC 7240) the answer is 202 at once with the job,
// which GET /v1/documents/jobs/{id} reports on and DELETE cancels.
#include <chrono>

#include "app/http/multipart.h"
#include "app/routes/routes.h"
#include "common/text.h"

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

// The ":id" path parameter; `what` names it in the error ("document id").
Result<int64_t> PathId(const HttpRequest& req, const std::string& what) {
  const std::string& s = req.params.at("id");
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return Status::InvalidArgument(what + " must be a positive number");
  return std::stoll(s);
}

Result<IngestUpload> ReadUpload(const HttpRequest& req, const Config& config) {
  const std::string content_type = req.Header("content-type");
  IngestUpload up;
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

Json JobJson(const IngestJobStatus& j) {
  Json out = {{"id", j.id},          {"state", IngestStateName(j.state)}, {"file_name", j.file_name},
              {"bytes", j.bytes},    {"chunks_done", j.chunks_done},      {"chunks_total", j.chunks_total},
              {"seconds", j.seconds}};
  out["kind"] = j.reindex_document > 0 ? "reindex" : "upload";
  if (!j.error.ok()) out["error"] = j.error.message();
  if (j.result) {
    out["document_id"] = j.result->document_id;
    out["duplicate"] = !j.result->inserted;  // the same bytes were already stored: nothing added
  }
  return out;
}

// The response to a finished upload.
HttpResponse UploadResponse(AppContext& ctx, const IngestJobStatus& job) {
  if (job.state != IngestState::kDone) {
    const Status& st = job.error;
    // A limit of the extraction child: the same bytes would meet it again, so not 429.
    if (st.code() == StatusCode::kUnsupported)
      return HttpResponse::Error(415, "invalid_request_error", st.message());
    if (st.code() == StatusCode::kResourceExhausted)
      return HttpResponse::Error(422, "invalid_request_error", st.message());
    return ErrorResponse(st);
  }
  auto doc = ctx.retriever->store().GetDocument(job.result->document_id);
  if (!doc.ok()) return ErrorResponse(doc.status());
  return JsonResponse(job.result->inserted ? 201 : 200, {{"document", DocumentJson(*doc)},
                                                         {"duplicate", !job.result->inserted},
                                                         {"job", JobJson(job)},
                                                         {"ingest_seconds", job.seconds}});
}

// The job queue's refusal: 503 with Retry-After when it is full.
HttpResponse QueueRefusal(const Status& st) {
  HttpResponse r = ErrorResponse(st);
  if (st.code() == StatusCode::kUnavailable) r.headers.push_back({"Retry-After", "10"});
  return r;
}

// 202 with the queued job and where to poll it.
HttpResponse JobAccepted(AppContext& ctx, int64_t job_id) {
  auto job = ctx.ingest_jobs->Get(job_id);
  HttpResponse r = JsonResponse(202, {{"job", job ? JobJson(*job) : Json::object()}});
  r.headers.push_back({"Location", "/v1/documents/jobs/" + std::to_string(job_id)});
  return r;
}

bool WantsAsync(const HttpRequest& req) {
  return AsciiLower(req.Header("prefer")).find("respond-async") != std::string::npos;
}

}  // namespace

void RegisterDocumentRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/documents",
             WithUser(ctx, Access::kAdmin, true,
                      [&ctx](const HttpRequest& req, HttpExchange& ex, const accounts::User& user) {
                        auto upload = ReadUpload(req, ctx.config);
                        if (!upload.ok()) return ErrorResponse(upload.status());
                        upload->user_id = user.id;
                        const RequestRecord record = RequestRecordOf(ex.request_id(), req.user_id, req.route);
                        const auto t0 = std::chrono::steady_clock::now();
                        auto finish = [&ctx, record, t0](int status) {
                          RecordDeferred(ctx, record, status, t0);
                        };
                        if (WantsAsync(req)) {
                          auto id = ctx.ingest_jobs->Submit(std::move(upload).value(), {});
                          return id.ok() ? JobAccepted(ctx, *id) : QueueRefusal(id.status());
                        }
                        // Ingestion embeds every chunk: seconds of work, done off the reactor thread.
                        auto response = ex.Defer();
                        auto id = ctx.ingest_jobs->Submit(
                            std::move(upload).value(),
                            [&ctx, response, finish](const IngestJobStatus& job) mutable {
                              const HttpResponse r = UploadResponse(ctx, job);
                              response->Send(r);
                              finish(r.status);
                            },
                            [response] { return response->cancelled(); });
                        if (!id.ok()) {
                          const HttpResponse r = QueueRefusal(id.status());
                          response->Send(r);
                          finish(r.status);
                        }
                        return HttpResponse::Json(202, "");
                      }));

  // Before "/v1/documents/:id", which would take "jobs" for an id.
  http.Route(
      "GET", "/v1/documents/jobs",
      WithUser(ctx, Access::kAdmin, true, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        Json list = Json::array();
        for (const IngestJobStatus& j : ctx.ingest_jobs->List()) list.push_back(JobJson(j));
        return JsonResponse(200, {{"jobs", list}});
      }));

  http.Route("GET", "/v1/documents/jobs/:id",
             WithUser(ctx, Access::kAdmin, true,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
                        auto id = PathId(req, "job id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto job = ctx.ingest_jobs->Get(*id);
                        if (!job)
                          return ErrorResponse(Status::NotFound("no upload job " + std::to_string(*id)));
                        Json body = {{"job", JobJson(*job)}};
                        if (job->state == IngestState::kDone) {
                          if (auto doc = ctx.retriever->store().GetDocument(job->result->document_id);
                              doc.ok())
                            body["document"] = DocumentJson(*doc);
                        }
                        return JsonResponse(200, body);
                      }));

  http.Route(
      "DELETE", "/v1/documents/jobs/:id",
      WithUser(
          ctx, Access::kAdmin, true, [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
            auto id = PathId(req, "job id");
            if (!id.ok()) return ErrorResponse(id.status());
            if (Status st = ctx.ingest_jobs->Cancel(*id); !st.ok()) return ErrorResponse(st);
            auto job = ctx.ingest_jobs->Get(*id);
            return JsonResponse(200, {{"cancelling", true}, {"job", job ? JobJson(*job) : Json::object()}});
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
                        auto id = PathId(req, "document id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto doc = ctx.retriever->store().GetDocument(*id);
                        if (!doc.ok()) return ErrorResponse(doc.status());
                        auto text = ctx.retriever->store().GetDocumentText(*id);
                        if (!text.ok()) return ErrorResponse(text.status());
                        return JsonResponse(200, {{"document", DocumentJson(*doc)}, {"text", *text}});
                      }));

  // Chunks and embeds the stored text again (after a change of chunk size or
  // embedding model), as a job of the upload queue: 202 and the job to poll.
  http.Route("POST", "/v1/documents/:id/reindex",
             WithUser(ctx, Access::kAdmin, true,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto id = PathId(req, "document id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto doc = ctx.retriever->store().GetDocument(*id);
                        if (!doc.ok()) return ErrorResponse(doc.status());
                        IngestUpload reindex;
                        reindex.file_name = doc->title.empty() ? doc->source_name : doc->title;
                        reindex.user_id = user.id;
                        reindex.reindex_document = *id;
                        auto job_id = ctx.ingest_jobs->Submit(std::move(reindex), {});
                        return job_id.ok() ? JobAccepted(ctx, *job_id) : QueueRefusal(job_id.status());
                      }));

  http.Route(
      "DELETE", "/v1/documents/:id",
      WithUser(ctx, Access::kAdmin, true,
               [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
                 auto id = PathId(req, "document id");
                 if (!id.ok()) return ErrorResponse(id.status());
                 auto removed = ctx.retriever->DeleteDocument(*id);
                 if (!removed.ok()) return ErrorResponse(removed.status());
                 return JsonResponse(200, {{"deleted", true}, {"id", *id}, {"chunks_removed", *removed}});
               }));
}

}  // namespace ragd::app
