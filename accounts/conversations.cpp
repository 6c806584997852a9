#include "accounts/conversations.h"

#include <algorithm>
#include <utility>

#include "common/text.h"

namespace ragd::accounts {
namespace {

constexpr size_t kTitleFromQuestionBytes = 80;

Status ValidateTitle(std::string_view title) {
  if (title.size() > kMaxConversationTitleBytes)
    return Status::InvalidArgument("the title is longer than " + std::to_string(kMaxConversationTitleBytes) +
                                   " bytes");
  if (!IsValidUtf8(title)) return Status::InvalidArgument("the title is not valid UTF-8");
  for (unsigned char c : title) {
    if (c < 0x20 || c == 0x7F) return Status::InvalidArgument("the title must not hold control characters");
  }
  return Status::Ok();
}

Conversation ReadConversation(const Statement& s) {
  Conversation c;
  c.id = s.ColumnInt(0);
  c.user_id = s.ColumnInt(1);
  c.title = s.ColumnText(2);
  c.created_at = s.ColumnInt(3);
  c.updated_at = s.ColumnInt(4);
  c.message_count = s.ColumnInt(5);
  return c;
}

Message ReadMessage(const Statement& s) {
  Message m;
  m.id = s.ColumnInt(0);
  m.conversation_id = s.ColumnInt(1);
  m.role = s.ColumnText(2);
  m.content = s.ColumnText(3);
  m.details = s.ColumnText(4);
  m.created_at = s.ColumnInt(5);
  return m;
}

constexpr const char* kConversationColumns =
    "SELECT c.id, c.user_id, c.title, c.created_at, c.updated_at,"
    " (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c ";

constexpr const char* kMessageColumns =
    "SELECT id, conversation_id, role, content, details, created_at FROM messages ";

// LIKE pattern matching `text` literally anywhere ('\' escapes), in ASCII
// lower case: it is matched against lower(title), as PostgreSQL's LIKE
// minds case where SQLite's does not.
std::string ContainsPattern(std::string_view text) {
  std::string p = "%";
  for (char c : AsciiLower(text)) {
    if (c == '%' || c == '_' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

// Whether conversation `id` belongs to `user_id`. Caller holds the Db lock.
Status CheckOwner(Db& db, int64_t user_id, int64_t id) {
  Result<Statement> q = db.Prepare("SELECT 1 FROM conversations WHERE id = ? AND user_id = ?");
  if (!q.ok()) return q.status();
  q->Bind(1, id).Bind(2, user_id);
  Result<bool> row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no conversation " + std::to_string(id));
  return Status::Ok();
}

Status Touch(Db& db, int64_t id, int64_t now) {
  Result<Statement> u = db.Prepare("UPDATE conversations SET updated_at = ? WHERE id = ?");
  if (!u.ok()) return u.status();
  return u->Bind(1, now).Bind(2, id).Run();
}

Result<int64_t> InsertMessage(Db& db, int64_t conversation_id, std::string_view role,
                              std::string_view content, std::string_view details, int64_t now) {
  Result<Statement> insert = db.Prepare(
      "INSERT INTO messages (conversation_id, role, content, details, created_at) VALUES (?, ?, ?, ?, ?) "
      "RETURNING id");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, conversation_id).Bind(2, role).Bind(3, content).Bind(4, details).Bind(5, now);
  Result<bool> row = insert->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("the new message has no id");
  return insert->ColumnInt(0);
}

}  // namespace

std::string TitleFromQuestion(std::string_view question) {
  std::string out;
  for (char c : Trim(question)) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F) {
      out += c;
    }
  }
  out = RepairUtf8(out);
  if (out.size() > kTitleFromQuestionBytes) {
    out.resize(CompleteUtf8Prefix(std::string_view(out).substr(0, kTitleFromQuestionBytes - 3)));
    out += "\xE2\x80\xA6";  // …
  }
  return out;
}

ConversationStore::ConversationStore(std::shared_ptr<Db> db, const Clock* clock)
    : db_(std::move(db)), clock_(clock) {}

Result<Conversation> ConversationStore::Create(int64_t user_id, std::string_view title) {
  RAGD_RETURN_IF_ERROR(ValidateTitle(title));
  const int64_t now = clock_->NowSeconds();
  auto lock = db_->Lock();
  Result<Statement> insert = db_->Prepare(
      "INSERT INTO conversations (user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?) "
      "RETURNING id");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, user_id).Bind(2, title).Bind(3, now).Bind(4, now);
  Result<bool> row = insert->Step();
  if (!row.ok()) {
    // The only constraint is the owner's foreign key.
    if (row.status().code() == StatusCode::kAlreadyExists)
      return Status::NotFound("no user " + std::to_string(user_id));
    return row.status();
  }
  if (!*row) return Status::Internal("the new conversation has no id");
  Conversation c;
  c.id = insert->ColumnInt(0);
  c.user_id = user_id;
  c.title = std::string(title);
  c.created_at = now;
  c.updated_at = now;
  return c;
}

Result<std::vector<Conversation>> ConversationStore::List(int64_t user_id, std::string_view title_query,
                                                          int64_t limit) {
  limit = std::clamp<int64_t>(limit, 1, 1000);
  const std::string sql = std::string(kConversationColumns) +
                          "WHERE c.user_id = ? AND (? = '' OR lower(c.title) LIKE ? ESCAPE '\\') "
                          "ORDER BY c.updated_at DESC, c.id DESC LIMIT ?";
  auto lock = db_->Lock();
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, user_id).Bind(2, title_query).Bind(3, ContainsPattern(title_query)).Bind(4, limit);
  std::vector<Conversation> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadConversation(*q));
  }
  return out;
}

Result<Conversation> ConversationStore::Get(int64_t user_id, int64_t conversation_id) {
  const std::string sql = std::string(kConversationColumns) + "WHERE c.id = ? AND c.user_id = ?";
  auto lock = db_->Lock();
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, conversation_id).Bind(2, user_id);
  Result<bool> row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no conversation " + std::to_string(conversation_id));
  return ReadConversation(*q);
}

Result<std::vector<Message>> ConversationStore::Messages(int64_t user_id, int64_t conversation_id) {
  auto lock = db_->Lock();
  RAGD_RETURN_IF_ERROR(CheckOwner(*db_, user_id, conversation_id));
  const std::string sql = std::string(kMessageColumns) + "WHERE conversation_id = ? ORDER BY id";
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, conversation_id);
  std::vector<Message> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadMessage(*q));
  }
  return out;
}

Status ConversationStore::Rename(int64_t user_id, int64_t conversation_id, std::string_view title) {
  RAGD_RETURN_IF_ERROR(ValidateTitle(title));
  if (Trim(title).empty()) return Status::InvalidArgument("the title must not be empty");
  auto lock = db_->Lock();
  Result<Statement> u =
      db_->Prepare("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ? AND user_id = ?");
  if (!u.ok()) return u.status();
  u->Bind(1, Trim(title)).Bind(2, clock_->NowSeconds()).Bind(3, conversation_id).Bind(4, user_id);
  RAGD_RETURN_IF_ERROR(u->Run());
  if (db_->Changes() == 0) return Status::NotFound("no conversation " + std::to_string(conversation_id));
  return Status::Ok();
}

Status ConversationStore::Delete(int64_t user_id, int64_t conversation_id) {
  auto lock = db_->Lock();
  Result<Statement> d = db_->Prepare("DELETE FROM conversations WHERE id = ? AND user_id = ?");
  if (!d.ok()) return d.status();
  RAGD_RETURN_IF_ERROR(d->Bind(1, conversation_id).Bind(2, user_id).Run());
  if (db_->Changes() == 0) return Status::NotFound("no conversation " + std::to_string(conversation_id));
  return Status::Ok();
}

Result<AppendedTurn> ConversationStore::AppendTurn(int64_t user_id, int64_t conversation_id,
                                                   const NewTurn& turn, int64_t replace_from) {
  const int64_t now = clock_->NowSeconds();
  auto lock = db_->Lock();
  RAGD_RETURN_IF_ERROR(db_->Begin());
  auto body = [&]() -> Result<AppendedTurn> {
    RAGD_RETURN_IF_ERROR(CheckOwner(*db_, user_id, conversation_id));
    if (replace_from > 0) {
      Result<Statement> d = db_->Prepare("DELETE FROM messages WHERE conversation_id = ? AND id >= ?");
      if (!d.ok()) return d.status();
      {
        Result<Statement> q = db_->Prepare("SELECT 1 FROM messages WHERE conversation_id = ? AND id = ?");
        if (!q.ok()) return q.status();
        q->Bind(1, conversation_id).Bind(2, replace_from);
        Result<bool> row = q->Step();
        if (!row.ok()) return row.status();
        if (!*row)
          return Status::InvalidArgument("message " + std::to_string(replace_from) +
                                         " is not in conversation " + std::to_string(conversation_id));
      }
      RAGD_RETURN_IF_ERROR(d->Bind(1, conversation_id).Bind(2, replace_from).Run());
    }
    AppendedTurn out;
    Result<int64_t> q = InsertMessage(*db_, conversation_id, "user", turn.question, "", now);
    if (!q.ok()) return q.status();
    Result<int64_t> a =
        InsertMessage(*db_, conversation_id, "assistant", turn.answer, turn.answer_details, now);
    if (!a.ok()) return a.status();
    out.question_id = *q;
    out.answer_id = *a;
    Result<Statement> name = db_->Prepare("UPDATE conversations SET title = ? WHERE id = ? AND title = ''");
    if (!name.ok()) return name.status();
    RAGD_RETURN_IF_ERROR(name->Bind(1, TitleFromQuestion(turn.question)).Bind(2, conversation_id).Run());
    RAGD_RETURN_IF_ERROR(Touch(*db_, conversation_id, now));
    return out;
  };
  Result<AppendedTurn> result = body();
  if (!result.ok()) {
    (void)db_->Rollback();
    return result.status();
  }
  if (Status st = db_->Commit(); !st.ok()) {
    (void)db_->Rollback();
    return st;
  }
  return result;
}

Result<std::pair<Message, Message>> ConversationStore::GetWithQuestion(int64_t user_id, int64_t message_id) {
  auto lock = db_->Lock();
  const std::string sql =
      std::string(kMessageColumns) +
      "WHERE id = ? AND conversation_id IN (SELECT id FROM conversations WHERE user_id = ?)";
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, message_id).Bind(2, user_id);
  Result<bool> row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no message " + std::to_string(message_id));
  std::pair<Message, Message> out;
  out.first = ReadMessage(*q);
  const std::string before =
      std::string(kMessageColumns) +
      "WHERE conversation_id = ? AND id < ? AND role = 'user' ORDER BY id DESC LIMIT 1";
  Result<Statement> p = db_->Prepare(before.c_str());
  if (!p.ok()) return p.status();
  p->Bind(1, out.first.conversation_id).Bind(2, message_id);
  Result<bool> prev = p->Step();
  if (!prev.ok()) return prev.status();
  if (*prev) out.second = ReadMessage(*p);
  return out;
}

}  // namespace ragd::accounts
