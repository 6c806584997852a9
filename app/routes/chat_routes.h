// Shared by the chat page's routes (conversations, feedback, the library)
// and by /v1/ask: a conversation's turns as JSON, a path id, and what an ask
// request adds when it belongs to a conversation or names documents.
#pragma once

#include <cstdint>
#include <vector>

#include "app/http/json_request.h"
#include "app/services/app_context.h"
#include "app/services/generation_runner.h"

namespace ragd::app {

// The positive number in path segment `name` (":id"); InvalidArgument naming it otherwise.
Result<int64_t> PathId(const HttpRequest& req, const char* name);

// The details stored with an answer (the citations, which were cited, the
// per-sentence support, finish reason): what the chat page needs to show it
// again after a reload.
Json AnswerDetails(const Reply& reply, const std::string& finish_reason);

// Reads the chat fields of a /v1/ask body and applies them:
//   "conversation_id": the conversation's earlier turns become q->history
//     (with "messages" absent) and the finished answer is appended to it,
//     its ids sent in the final event ("conversation_id", "message_id",
//     "question_id"); 404 for a conversation that is not the user's;
//   "replace_from": with conversation_id, a message id: the history stops
//     before it and the new turn replaces it and all later ones (regenerate,
//     edit and resend);
//   "documents": ids of documents to answer from (400 for an unknown one).
Status ApplyChatFields(AppContext& ctx, const accounts::User& user, const Json& body, RagQuestion* q,
                       GenerationPlan* plan);

}  // namespace ragd::app
