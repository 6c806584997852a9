// Ratings of answers: a user rates an answer of their own conversations
// (thumbs up or down, an optional comment); admins list them and export
// them as a labelled set for `ragd eval` (JSON Lines, app/eval/eval.h).
#include "app/routes/chat_routes.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

// The titles of the documents an answer cited (its stored details).
Json CitedTitles(const Json& details) {
  Json titles = Json::array();
  if (!details.is_object() || !details.contains("citations") || !details["citations"].is_array())
    return titles;
  std::set<int> cited;
  if (details.contains("cited") && details["cited"].is_array())
    for (const Json& n : details["cited"])
      if (n.is_number_integer()) cited.insert(n.get<int>());
  for (const Json& c : details["citations"]) {
    if (!c.is_object() || !c.contains("n") || !c["n"].is_number_integer()) continue;
    if (!cited.count(c["n"].get<int>()) || !c.contains("title") || !c["title"].is_string()) continue;
    if (std::find(titles.begin(), titles.end(), c["title"]) == titles.end()) titles.push_back(c["title"]);
  }
  return titles;
}

Json FeedbackJson(const accounts::Feedback& f) {
  const Json details = Json::parse(f.details, nullptr, /*allow_exceptions=*/false);
  return {{"id", f.id},
          {"user_id", f.user_id},
          {"username", f.username},
          {"message_id", f.message_id > 0 ? Json(f.message_id) : Json(nullptr)},
          {"rating", f.rating},
          {"comment", f.comment},
          {"question", f.question},
          {"answer", f.answer},
          {"documents", CitedTitles(details)},
          {"created_at", f.created_at}};
}

// One line of the labelled set: the question; for a helpful answer, the
// documents it cited as the relevant ones (an unhelpful one's citations are
// no label, so they are kept aside as "cited_documents"); and the rating,
// comment and answer for whoever curates the set (ragd eval reads only the
// fields it knows).
Json EvalLine(const accounts::Feedback& f) {
  const Json cited = CitedTitles(Json::parse(f.details, nullptr, /*allow_exceptions=*/false));
  return {{"id", "feedback-" + std::to_string(f.id)},
          {"category", f.rating > 0 ? "feedback_up" : "feedback_down"},
          {"question", f.question},
          {"documents", f.rating > 0 ? cited : Json::array()},
          {"cited_documents", cited},
          {"key_phrases", Json::array()},
          {"rating", f.rating},
          {"comment", f.comment},
          {"answer", f.answer}};
}

Result<int> ReadRating(const Json& body) {
  auto it = body.find("rating");
  if (it == body.end()) return Status::InvalidArgument("field 'rating' is required: \"up\" or \"down\"");
  if (it->is_string()) {
    if (*it == "up") return 1;
    if (*it == "down") return -1;
  } else if (it->is_number_integer()) {
    if (*it == 1) return 1;
    if (*it == -1) return -1;
  }
  return Status::InvalidArgument("field 'rating' must be \"up\" or \"down\" (or 1 or -1)");
}

}  // namespace

void RegisterFeedbackRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("POST", "/v1/feedback",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto body = ParseJsonObject(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        auto message_id = OptionalInt(*body, "message_id", 1, INT64_MAX);
                        if (!message_id.ok()) return ErrorResponse(message_id.status());
                        if (!message_id->has_value())
                          return ErrorResponse(Status::InvalidArgument("field 'message_id' is required"));
                        auto rating = ReadRating(*body);
                        if (!rating.ok()) return ErrorResponse(rating.status());
                        auto comment = OptionalString(*body, "comment", accounts::kMaxFeedbackCommentBytes);
                        if (!comment.ok()) return ErrorResponse(comment.status());
                        auto rated = ctx.accounts->conversations().GetWithQuestion(user.id, **message_id);
                        if (!rated.ok()) return ErrorResponse(rated.status());
                        if (rated->first.role != "assistant")
                          return ErrorResponse(Status::InvalidArgument("only answers can be rated"));
                        accounts::NewFeedback f;
                        f.message_id = rated->first.id;
                        f.rating = *rating;
                        f.comment = comment->value_or("");
                        f.question = rated->second.content;
                        f.answer = rated->first.content;
                        f.details = rated->first.details;
                        auto stored = ctx.accounts->feedback().Rate(user.id, f);
                        if (!stored.ok()) return ErrorResponse(stored.status());
                        return JsonResponse(200, FeedbackJson(*stored));
                      }));

  http.Route(
      "GET", "/v1/feedback",
      WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        auto list = ctx.accounts->feedback().List();
        if (!list.ok()) return ErrorResponse(list.status());
        Json data = Json::array();
        for (const auto& f : *list) data.push_back(FeedbackJson(f));
        return JsonResponse(200, {{"feedback", data}});
      }));

  http.Route(
      "GET", "/v1/feedback/export",
      WithUser(ctx, Access::kAdmin, false, [&ctx](const HttpRequest&, HttpExchange&, const accounts::User&) {
        auto list = ctx.accounts->feedback().List(100000);
        if (!list.ok()) return ErrorResponse(list.status());
        HttpResponse r;
        r.content_type = "application/x-ndjson; charset=utf-8";
        r.headers.push_back({"Content-Disposition", "attachment; filename=\"ragd-feedback.jsonl\""});
        for (const auto& f : *list)
          if (!f.question.empty()) r.body += DumpJson(EvalLine(f)) + "\n";
        return r;
      }));
}

}  // namespace ragd::app
