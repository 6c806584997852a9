#include "accounts/feedback.h"

#include <algorithm>
#include <utility>

#include "common/text.h"

namespace ragd::accounts {
namespace {

constexpr const char* kColumns =
    "SELECT f.id, f.user_id, COALESCE(u.username, ''), COALESCE(f.message_id, 0), f.rating, f.comment,"
    " f.question, f.answer, f.details, f.created_at FROM feedback f LEFT JOIN users u ON u.id = f.user_id ";

Feedback ReadFeedback(const Statement& s) {
  Feedback f;
  f.id = s.ColumnInt(0);
  f.user_id = s.ColumnInt(1);
  f.username = s.ColumnText(2);
  f.message_id = s.ColumnInt(3);
  f.rating = static_cast<int>(s.ColumnInt(4));
  f.comment = s.ColumnText(5);
  f.question = s.ColumnText(6);
  f.answer = s.ColumnText(7);
  f.details = s.ColumnText(8);
  f.created_at = s.ColumnInt(9);
  return f;
}

Result<std::vector<Feedback>> ReadAll(Statement& q) {
  std::vector<Feedback> out;
  for (;;) {
    Result<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadFeedback(q));
  }
}

}  // namespace

FeedbackStore::FeedbackStore(std::shared_ptr<Db> db, const Clock* clock)
    : db_(std::move(db)), clock_(clock) {}

Result<Feedback> FeedbackStore::Rate(int64_t user_id, const NewFeedback& f) {
  if (f.rating != 1 && f.rating != -1) return Status::InvalidArgument("the rating must be +1 or -1");
  if (f.comment.size() > kMaxFeedbackCommentBytes)
    return Status::InvalidArgument("the comment is longer than " + std::to_string(kMaxFeedbackCommentBytes) +
                                   " bytes");
  if (!IsValidUtf8(f.comment)) return Status::InvalidArgument("the comment is not valid UTF-8");
  const int64_t now = clock_->NowSeconds();
  auto lock = db_->Lock();
  Result<Statement> upsert = db_->Prepare(
      "INSERT INTO feedback (user_id, message_id, rating, comment, question, answer, details, created_at)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (user_id, message_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment,"
      " created_at = excluded.created_at");
  if (!upsert.ok()) return upsert.status();
  upsert->Bind(1, user_id)
      .Bind(2, f.message_id)
      .Bind(3, static_cast<int64_t>(f.rating))
      .Bind(4, f.comment)
      .Bind(5, f.question)
      .Bind(6, f.answer)
      .Bind(7, f.details)
      .Bind(8, now);
  RAGD_RETURN_IF_ERROR(upsert->Run());
  const std::string sql = std::string(kColumns) + "WHERE f.user_id = ? AND f.message_id = ?";
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, user_id).Bind(2, f.message_id);
  Result<std::vector<Feedback>> rows = ReadAll(*q);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::Internal("the rating was not stored");
  return rows->front();
}

Result<std::vector<Feedback>> FeedbackStore::List(int64_t limit) {
  const std::string sql = std::string(kColumns) + "ORDER BY f.created_at DESC, f.id DESC LIMIT ?";
  auto lock = db_->Lock();
  Result<Statement> q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  q->Bind(1, std::clamp<int64_t>(limit, 1, 100000));
  return ReadAll(*q);
}

Result<std::vector<Feedback>> FeedbackStore::ForMessages(int64_t user_id, const std::vector<int64_t>& ids) {
  std::vector<Feedback> out;
  const std::string sql = std::string(kColumns) + "WHERE f.user_id = ? AND f.message_id = ?";
  auto lock = db_->Lock();
  for (int64_t id : ids) {
    Result<Statement> q = db_->Prepare(sql.c_str());
    if (!q.ok()) return q.status();
    q->Bind(1, user_id).Bind(2, id);
    Result<std::vector<Feedback>> rows = ReadAll(*q);
    if (!rows.ok()) return rows.status();
    for (Feedback& f : *rows) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ragd::accounts
