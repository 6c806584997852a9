// Ratings of answers: thumbs up or down with an optional comment, given by
// the user who asked, shown to admins and exported as an evaluation set.
//
// A rating keeps its own copy of the question, the answer and the answer's
// details (citations), so it outlives the conversation it came from. A user
// rates an answer once; rating it again replaces the earlier rating.
//
// Thread-safety: FeedbackStore is safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/clock.h"
#include "accounts/db.h"
#include "common/status.h"

namespace ragd::accounts {

inline constexpr size_t kMaxFeedbackCommentBytes = 4000;

struct NewFeedback {
  int64_t message_id = 0;  // the rated answer (a message of the user's conversation)
  int rating = 0;          // +1 (helpful) or -1 (not helpful)
  std::string comment;     // may be empty; at most kMaxFeedbackCommentBytes
  std::string question;    // copies, kept when the conversation is deleted
  std::string answer;
  std::string details;  // the answer's details (see conversations.h)
};

struct Feedback {
  int64_t id = 0;
  int64_t user_id = 0;
  std::string username;
  int64_t message_id = 0;  // 0 once the conversation was deleted
  int rating = 0;
  std::string comment;
  std::string question;
  std::string answer;
  std::string details;
  int64_t created_at = 0;  // Unix seconds of the latest rating
};

class FeedbackStore {
 public:
  // `db` and `clock` must outlive the store.
  FeedbackStore(std::shared_ptr<Db> db, const Clock* clock);

  // Stores (or replaces) `user_id`'s rating of feedback.message_id. The
  // caller has checked that the message is the user's.
  // InvalidArgument for a rating other than +1/-1 or a bad comment.
  Result<Feedback> Rate(int64_t user_id, const NewFeedback& feedback);
  // Every rating, newest first, at most `limit` (1..100000).
  Result<std::vector<Feedback>> List(int64_t limit = 1000);
  // The user's ratings of these messages (to show them again in a conversation).
  Result<std::vector<Feedback>> ForMessages(int64_t user_id, const std::vector<int64_t>& message_ids);

 private:
  std::shared_ptr<Db> db_;
  const Clock* clock_;
};

}  // namespace ragd::accounts
