// Conversations of the chat page, kept per user in app.db: a titled list of
// turns (the user's questions and the answers, with what the answer cited).
//
// Every call names the owner: a conversation of another user answers exactly
// like one that does not exist (NotFound), so ids leak nothing.
//
// A message's `details` is an opaque text the caller chooses (the app stores
// the answer's citations and per-sentence support as JSON); this store never
// reads it.
//
// Thread-safety: ConversationStore is safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "common/status.h"

namespace ragd::accounts {

inline constexpr size_t kMaxConversationTitleBytes = 200;

struct Conversation {
  int64_t id = 0;
  int64_t user_id = 0;
  std::string title;       // "" until the first question names it (see AppendTurn)
  int64_t created_at = 0;  // Unix seconds
  int64_t updated_at = 0;  // last rename or turn; lists are ordered by it
  int64_t message_count = 0;
};

struct Message {
  int64_t id = 0;  // increases with time inside a conversation
  int64_t conversation_id = 0;
  std::string role;     // "user" or "assistant"
  std::string content;  // the question, or the answer text
  std::string details;  // opaque (see the file comment); "" when none
  int64_t created_at = 0;
};

// One question and its answer, appended together.
struct NewTurn {
  std::string question;
  std::string answer;
  std::string answer_details;  // stored as the answer message's details
};

// The messages written by AppendTurn.
struct AppendedTurn {
  int64_t question_id = 0;
  int64_t answer_id = 0;
};

// A title made from a question: its first line, spaces collapsed, cut on a
// UTF-8 boundary to at most 80 bytes (with "…" when cut).
std::string TitleFromQuestion(std::string_view question);

class ConversationStore {
 public:
  // `db` and `clock` must outlive the store.
  ConversationStore(std::shared_ptr<Db> db, const Clock* clock);

  // A new, empty conversation. InvalidArgument for a title over
  // kMaxConversationTitleBytes or with control characters.
  Result<Conversation> Create(int64_t user_id, std::string_view title = "");
  // The user's conversations, the most recently updated first. `title_query`
  // non-empty: only those whose title contains it (ASCII case ignored; no
  // wildcards). At most `limit` (1..1000).
  Result<std::vector<Conversation>> List(int64_t user_id, std::string_view title_query = "",
                                         int64_t limit = 200);
  // NotFound unless the conversation exists and belongs to `user_id`.
  Result<Conversation> Get(int64_t user_id, int64_t conversation_id);
  // Its messages, oldest first (NotFound as Get).
  Result<std::vector<Message>> Messages(int64_t user_id, int64_t conversation_id);
  // InvalidArgument for a bad title (as Create, and empty); NotFound as Get.
  Status Rename(int64_t user_id, int64_t conversation_id, std::string_view title);
  // Deletes it with its messages; NotFound as Get.
  Status Delete(int64_t user_id, int64_t conversation_id);

  // Appends a question and its answer in one transaction. `replace_from` > 0
  // first removes that message and every later one (regenerating an answer,
  // or editing a question and asking again); it must be a message of this
  // conversation (InvalidArgument otherwise). An untitled conversation takes
  // its title from the question. NotFound as Get.
  Result<AppendedTurn> AppendTurn(int64_t user_id, int64_t conversation_id, const NewTurn& turn,
                                  int64_t replace_from = 0);

  // The message `message_id` when it belongs to a conversation of `user_id`
  // (NotFound otherwise), and the user question just before it (Message with
  // id 0 when none).
  Result<std::pair<Message, Message>> GetWithQuestion(int64_t user_id, int64_t message_id);

 private:
  std::shared_ptr<Db> db_;
  const Clock* clock_;
};

}  // namespace ragd::accounts
