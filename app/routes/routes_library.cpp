// The library as users see it (read-only, any signed-in user): the list of
// documents to restrict a question to, and one document's text with its
// passages, so a citation opens inside its document. Also the limits the
// chat page must enforce the way the server does.
#include "app/routes/chat_routes.h"
#include "app/routes/routes.h"
#include "corpus/extract.h"

namespace ragd::app {
namespace {

Json LibraryDocumentJson(const corpus::DocumentInfo& d) {
  return {{"id", d.id},
          {"title", d.title},
          {"media_type", d.media_type},
          {"chunks", d.chunk_count},
          {"created_at", d.created_at}};
}

}  // namespace

void RegisterLibraryRoutes(HttpServer& http, AppContext& ctx) {
  http.Route(
      "GET", "/v1/library",
      WithUser(ctx, Access::kUser, true, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        auto docs = ctx.retriever->store().ListDocuments();
        if (!docs.ok()) return ErrorResponse(docs.status());
        Json list = Json::array();
        for (const auto& d : *docs) list.push_back(LibraryDocumentJson(d));
        return JsonResponse(200, {{"documents", list}});
      }));

  http.Route(
      "GET", "/v1/library/:id",
      WithUser(
          ctx, Access::kUser, true, [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User&) {
            auto id = PathId(req, "id");
            if (!id.ok()) return ErrorResponse(id.status());
            const corpus::Store& store = ctx.retriever->store();
            auto doc = store.GetDocument(*id);
            if (!doc.ok()) return ErrorResponse(doc.status());
            auto text = store.GetDocumentText(*id);
            if (!text.ok()) return ErrorResponse(text.status());
            auto chunks = store.ListChunks(*id);
            if (!chunks.ok()) return ErrorResponse(chunks.status());
            const bool paged = doc->media_type == corpus::kMediaPdf;
            Json passages = Json::array();
            for (const auto& c : *chunks) {
              Json p = {
                  {"chunk_id", c.id}, {"start", c.start}, {"end", c.end}, {"section", c.heading_context}};
              if (paged) p["page"] = PageAt(*text, c.start);
              passages.push_back(std::move(p));
            }
            Json out = LibraryDocumentJson(*doc);
            out["text"] = *text;
            out["passages"] = std::move(passages);
            return JsonResponse(200, out);
          }));

  http.Route(
      "GET", "/v1/chat/limits",
      WithUser(ctx, Access::kUser, false, [](const HttpRequest&, HttpExchange&, const accounts::User&) {
        return JsonResponse(200, {{"max_question_bytes", kMaxQuestionBytes},
                                  {"max_title_bytes", accounts::kMaxConversationTitleBytes},
                                  {"max_comment_bytes", accounts::kMaxFeedbackCommentBytes}});
      }));
}

}  // namespace ragd::app
