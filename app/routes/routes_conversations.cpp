// Conversations of the chat page (any signed-in user, each sees only their
// own): list and search by title, create, get with messages, rename,
// delete; and the conversation fields of /v1/ask (chat_routes.h).
#include <algorithm>

#include "app/routes/chat_routes.h"
#include "app/routes/routes.h"

namespace ragd::app {
namespace {

// Earlier turns given to the model with a follow-up: the last few, so a
// long conversation still leaves the context to the sources.
constexpr size_t kHistoryMessages = 6;
constexpr size_t kHistoryBytes = 6000;
constexpr int64_t kMaxDocumentFilter = 100;

Json ConversationJson(const accounts::Conversation& c) {
  return {{"id", c.id},
          {"title", c.title},
          {"created_at", c.created_at},
          {"updated_at", c.updated_at},
          {"message_count", c.message_count}};
}

// A message as the page shows it: an answer with its stored details
// (citations, sentences, ...) and the user's rating of it.
Json MessageJson(const accounts::Message& m, const Json* feedback) {
  Json j = {{"id", m.id}, {"role", m.role}, {"content", m.content}, {"created_at", m.created_at}};
  if (!m.details.empty()) {
    Json details = Json::parse(m.details, nullptr, /*allow_exceptions=*/false);
    if (details.is_object()) j.update(details);
  }
  if (m.role == "assistant") j["feedback"] = feedback ? *feedback : Json(nullptr);
  return j;
}

Result<Json> ConversationWithMessages(AppContext& ctx, int64_t user_id, int64_t id) {
  auto& store = ctx.accounts->conversations();
  auto conversation = store.Get(user_id, id);
  if (!conversation.ok()) return conversation.status();
  auto messages = store.Messages(user_id, id);
  if (!messages.ok()) return messages.status();
  std::vector<int64_t> answer_ids;
  for (const auto& m : *messages)
    if (m.role == "assistant") answer_ids.push_back(m.id);
  auto ratings = ctx.accounts->feedback().ForMessages(user_id, answer_ids);
  if (!ratings.ok()) return ratings.status();
  std::map<int64_t, Json> by_message;
  for (const auto& f : *ratings)
    by_message[f.message_id] = {{"rating", f.rating}, {"comment", f.comment}, {"created_at", f.created_at}};
  Json list = Json::array();
  for (const auto& m : *messages) {
    auto it = by_message.find(m.id);
    list.push_back(MessageJson(m, it == by_message.end() ? nullptr : &it->second));
  }
  Json out = ConversationJson(*conversation);
  out["messages"] = std::move(list);
  return out;
}

// The turns before `replace_from` (all when 0), the last few only, as chat messages.
Result<std::vector<inference::ChatMessage>> History(AppContext& ctx, int64_t user_id, int64_t id,
                                                    int64_t replace_from) {
  auto messages = ctx.accounts->conversations().Messages(user_id, id);
  if (!messages.ok()) return messages.status();
  std::vector<inference::ChatMessage> history;
  bool found = replace_from == 0;
  for (const auto& m : *messages) {
    if (replace_from > 0 && m.id >= replace_from) {
      found = found || m.id == replace_from;
      break;
    }
    history.push_back({m.role, m.content});
  }
  if (!found)
    return Status::InvalidArgument("field 'replace_from': message " + std::to_string(replace_from) +
                                   " is not in conversation " + std::to_string(id));
  size_t keep = 0, bytes = 0;
  for (auto it = history.rbegin(); it != history.rend() && keep < kHistoryMessages; ++it) {
    bytes += it->content.size();
    if (bytes > kHistoryBytes && keep > 0) break;
    ++keep;
  }
  history.erase(history.begin(), history.end() - static_cast<std::ptrdiff_t>(keep));
  // The model's turns alternate from a user turn.
  if (!history.empty() && history.front().role != "user") history.erase(history.begin());
  return history;
}

Result<std::vector<corpus::DocumentId>> ReadDocumentFilter(AppContext& ctx, const Json& body) {
  std::vector<corpus::DocumentId> ids;
  auto it = body.find("documents");
  if (it == body.end() || it->is_null()) return ids;
  if (!it->is_array()) return Status::InvalidArgument("field 'documents' must be an array of document ids");
  if (static_cast<int64_t>(it->size()) > kMaxDocumentFilter)
    return Status::InvalidArgument("field 'documents' may name at most " +
                                   std::to_string(kMaxDocumentFilter) + " documents");
  for (const Json& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
      return Status::InvalidArgument("field 'documents' must be an array of document ids");
    const auto id = v.get<corpus::DocumentId>();
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
    auto doc = ctx.retriever->store().GetDocument(id);
    if (!doc.ok()) {
      if (doc.status().code() == StatusCode::kNotFound)
        return Status::InvalidArgument("field 'documents': there is no document " + std::to_string(id));
      return doc.status();
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

Result<int64_t> PathId(const HttpRequest& req, const char* name) {
  auto it = req.params.find(name);
  const std::string s = it == req.params.end() ? "" : it->second;
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos || s == "0")
    return Status::InvalidArgument(std::string(name) + " must be a positive number");
  return static_cast<int64_t>(std::stoll(s));
}

Json AnswerDetails(const Reply& reply, const std::string& finish_reason) {
  Json cited = Json::array();
  if (reply.sources != nullptr)
    for (int n : CitedNumbers(reply.text, static_cast<int>(reply.sources->size()))) cited.push_back(n);
  const bool attributed = reply.attribution.is_object();
  return {{"citations", reply.sources ? CitationsJson(*reply.sources) : Json::array()},
          {"cited", cited},
          {"grounded", attributed ? reply.attribution["grounded"] : Json(true)},
          {"sentences", attributed ? reply.attribution["sentences"] : Json::array()},
          {"finish_reason", finish_reason},
          {"answer_model", reply.answer_model}};
}

Status ApplyChatFields(AppContext& ctx, const accounts::User& user, const Json& body, RagQuestion* q,
                       GenerationPlan* plan) {
  auto documents = ReadDocumentFilter(ctx, body);
  if (!documents.ok()) return documents.status();
  q->only_documents = std::move(documents).value();

  auto conversation_id = OptionalInt(body, "conversation_id", 1, INT64_MAX);
  if (!conversation_id.ok()) return conversation_id.status();
  auto replace_from = OptionalInt(body, "replace_from", 1, INT64_MAX);
  if (!replace_from.ok()) return replace_from.status();
  if (!conversation_id->has_value()) {
    if (replace_from->has_value())
      return Status::InvalidArgument("field 'replace_from' needs 'conversation_id'");
    return Status::Ok();
  }
  if (body.contains("messages"))
    return Status::InvalidArgument("give either 'messages' or 'conversation_id', not both");
  const int64_t id = **conversation_id;
  const int64_t from = replace_from->value_or(0);
  auto history = History(ctx, user.id, id, from);
  if (!history.ok()) return history.status();
  q->history = std::move(history).value();

  accounts::ConversationStore* store = &ctx.accounts->conversations();
  plan->on_finished = [store, user_id = user.id, id, from, question = q->question,
                       documents = q->only_documents](const Reply& reply, const std::string& finish) -> Json {
    Json answer = AnswerDetails(reply, finish);
    if (!documents.empty()) answer["documents"] = documents;
    const std::string details = DumpJson(answer);
    auto turn = store->AppendTurn(user_id, id, {question, reply.text, details}, from);
    if (!turn.ok()) return {{"conversation_id", id}, {"conversation_error", turn.status().message()}};
    return {{"conversation_id", id}, {"question_id", turn->question_id}, {"message_id", turn->answer_id}};
  };
  return Status::Ok();
}

void RegisterConversationRoutes(HttpServer& http, AppContext& ctx) {
  http.Route("GET", "/v1/conversations",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        std::string query;
                        if (auto it = req.query.find("q"); it != req.query.end()) query = it->second;
                        if (query.size() > accounts::kMaxConversationTitleBytes)
                          return ErrorResponse(Status::InvalidArgument("q is longer than a title may be"));
                        auto list = ctx.accounts->conversations().List(user.id, query);
                        if (!list.ok()) return ErrorResponse(list.status());
                        Json data = Json::array();
                        for (const auto& c : *list) data.push_back(ConversationJson(c));
                        return JsonResponse(200, {{"conversations", data}});
                      }));

  http.Route("POST", "/v1/conversations",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        Json body = Json::object();
                        if (!req.body.empty()) {
                          auto parsed = ParseJsonObject(req.body);
                          if (!parsed.ok()) return ErrorResponse(parsed.status());
                          body = std::move(parsed).value();
                        }
                        auto title = OptionalString(body, "title", accounts::kMaxConversationTitleBytes);
                        if (!title.ok()) return ErrorResponse(title.status());
                        auto made = ctx.accounts->conversations().Create(user.id, title->value_or(""));
                        if (!made.ok()) return ErrorResponse(made.status());
                        Json out = ConversationJson(*made);
                        out["messages"] = Json::array();
                        return JsonResponse(201, out);
                      }));

  http.Route("GET", "/v1/conversations/:id",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto id = PathId(req, "id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto out = ConversationWithMessages(ctx, user.id, *id);
                        if (!out.ok()) return ErrorResponse(out.status());
                        return JsonResponse(200, *out);
                      }));

  http.Route("PATCH", "/v1/conversations/:id",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto id = PathId(req, "id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        auto body = ParseJsonObject(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        auto title = RequiredString(*body, "title", accounts::kMaxConversationTitleBytes);
                        if (!title.ok()) return ErrorResponse(title.status());
                        auto& store = ctx.accounts->conversations();
                        if (Status st = store.Rename(user.id, *id, *title); !st.ok())
                          return ErrorResponse(st);
                        auto renamed = store.Get(user.id, *id);
                        if (!renamed.ok()) return ErrorResponse(renamed.status());
                        return JsonResponse(200, ConversationJson(*renamed));
                      }));

  http.Route("DELETE", "/v1/conversations/:id",
             WithUser(ctx, Access::kUser, false,
                      [&ctx](const HttpRequest& req, HttpExchange&, const accounts::User& user) {
                        auto id = PathId(req, "id");
                        if (!id.ok()) return ErrorResponse(id.status());
                        if (Status st = ctx.accounts->conversations().Delete(user.id, *id); !st.ok())
                          return ErrorResponse(st);
                        return JsonResponse(200, {{"deleted", true}, {"id", *id}});
                      }));
}

}  // namespace ragd::app
