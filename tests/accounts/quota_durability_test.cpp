// The quota ledger's usage rows: written by the ledger's own thread (a
// report or settle waits on SQLite only when the writer has fallen behind),
// and checkpointed while a request runs, so a crash (a real SIGKILL of a
// child process here) loses at most the tokens since the last checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "accounts/db.h"
#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;

class QuotaDurability : public testing::BackendTest {};

// A user with a budget of 10000 tokens, made in `store`.
User UserIn(const testing::Store& store, const Clock* clock, const std::string& name) {
  auto accounts = OpenAccounts(store, clock);
  return accounts ? MakeUser(*accounts, name, 10000) : User();
}

// A ledger on the test's store (a file database or PostgreSQL), and a
// second connection that reads its rows as a restarted server would find
// them after a kill.
struct LedgerOnStore {
  LedgerOnStore(const testing::Store& store, const std::string& name) : clock(testing::kNoonMillis) {
    user = UserIn(store, &clock, name);
    auto opened = testing::OpenDb(store);
    auto second = testing::OpenDb(store);
    EXPECT_TRUE(opened.ok() && second.ok());
    if (!opened.ok() || !second.ok()) return;
    db = std::move(opened).value();
    reader = std::move(second).value();
    ledger = std::make_unique<QuotaLedger>(db, &clock, QuotaOptions());
  }

  // Tokens in the user's usage rows.
  int64_t RowTokens() {
    auto lock = reader->Lock();
    auto query = reader->Prepare(
        "SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM usage WHERE user_id = ?");
    if (!query.ok()) return -1;
    query->Bind(1, user.id);
    auto row = query->Step();
    return row.ok() && *row ? query->ColumnInt(0) : -1;
  }

  ManualClock clock;
  User user;
  std::shared_ptr<Db> db;
  std::unique_ptr<Db> reader;
  std::unique_ptr<QuotaLedger> ledger;
};

TEST_P(QuotaDurability, ReportWaitsForTheDatabaseOnlyWhenTheLedgerIsBehind) {
  LedgerOnStore f(store(), "patient");
  ASSERT_TRUE(f.ledger);
  auto reservation = f.ledger->Reserve(f.user, 100, "/v1/completions");
  ASSERT_TRUE(reservation.ok());
  reservation->Report(10, 1);  // the first row: written before the first token goes out
  {
    // Another writer holds the database (a slow disk, a long transaction):
    // a checkpoint whose predecessor is on disk does not wait for it, so
    // the inference thread goes on.
    auto busy = f.db->Lock();
    auto reported = std::async(std::launch::async, [&] { reservation->Report(10, 17); });
    const bool returned = reported.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    busy.unlock();
    ASSERT_TRUE(returned) << "a checkpoint waited for the database lock";
  }
  {
    // Settle returns with its row on disk: the client is told the counts
    // only after it, and a crash then keeps them exactly.
    auto busy = f.db->Lock();
    auto settled = std::async(std::launch::async, [&] {
      const bool ok = reservation->Settle(10, 20).ok();
      return std::make_pair(ok, f.RowTokens());
    });
    settled.wait_for(std::chrono::milliseconds(200));  // Settle runs into the held database
    busy.unlock();
    const auto [ok, on_disk] = settled.get();
    EXPECT_TRUE(ok);
    EXPECT_EQ(on_disk, 30);
  }
  EXPECT_EQ(f.ledger->GetStatus(f.user)->used, 30);
  auto days = f.ledger->DailyUsage(f.user.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].prompt_tokens, 10);
  EXPECT_EQ((*days)[0].completion_tokens, 20);
  EXPECT_EQ((*days)[0].requests, 1);
  EXPECT_EQ((*days)[0].successful_answers, 1);
}

TEST_P(QuotaDurability, ACrashKeepsTheTokensUpToTheLastCheckpoint) {
  ManualClock clock(testing::kNoonMillis);
  const User user = UserIn(store(), &clock, "crashy");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A server mid-answer: prompt computed, 45 tokens streamed, then killed.
    auto accounts = OpenAccounts(store(), &clock);
    auto r = accounts->quota().Reserve(user, 1000, "/v1/chat/completions");
    if (!r.ok()) ::_exit(2);
    for (int completion = 1; completion <= 45; ++completion) r->Report(100, completion);
    accounts->quota().Flush();  // what the writer had written by the time of the crash
    const char byte = 1;
    (void)!::write(ready[1], &byte, 1);
    ::raise(SIGKILL);
    ::_exit(3);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ::close(ready[0]);

  // Checkpoints at 101 tokens (the first report), 117 and 133: the 12
  // tokens after that were in memory only.
  auto accounts = OpenAccounts(store(), &clock);
  ASSERT_TRUE(accounts);
  Result<QuotaStatus> after = accounts->quota().GetStatus(user);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->used, 100 + 33);
  EXPECT_GE(after->used, 145 - kCheckpointTokens);
  auto days = accounts->quota().DailyUsage(user.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].requests, 1);
  EXPECT_EQ((*days)[0].successful_answers, 0);  // it never finished
}

TEST_P(QuotaDurability, AnAnswerNeverRunsAheadOfItsRowByACheckpointWhenTheDatabaseStalls) {
  LedgerOnStore f(store(), "stalled");
  ASSERT_TRUE(f.ledger);
  auto r = f.ledger->Reserve(f.user, 1000, "/v1/chat/completions");
  ASSERT_TRUE(r.ok());
  {
    // The database is held (another process's transaction, a slow disk)
    // when the first token comes: the prompt's row is on disk before
    // Report returns, i.e. before the token is sent.
    auto busy = f.db->Lock();
    auto first = std::async(std::launch::async, [&] {
      r->Report(100, 1);
      return f.RowTokens();
    });
    first.wait_for(std::chrono::milliseconds(200));  // the reporter runs into the held database
    busy.unlock();
    EXPECT_EQ(first.get(), 101);
  }
  {
    // Held again mid-answer: Report holds the answer back rather than
    // letting it run kCheckpointTokens past what is on disk.
    auto busy = f.db->Lock();
    auto rest = std::async(std::launch::async, [&] {
      for (int64_t completion = 2; completion <= 100; ++completion) {
        r->Report(100, completion);
        if (f.RowTokens() < 100 + completion - (kCheckpointTokens - 1)) return completion;
      }
      return int64_t{0};
    });
    rest.wait_for(std::chrono::milliseconds(200));
    busy.unlock();
    EXPECT_EQ(rest.get(), 0) << "the answer ran ahead of its row at this many tokens";
  }
  ASSERT_TRUE(r->Settle(100, 100).ok());
  f.ledger->Flush();
  EXPECT_EQ(f.RowTokens(), 200);
}

TEST_P(QuotaDurability, ARequestReleasedBeforeAnyTokenLeavesNoRow) {
  ManualClock clock(testing::kNoonMillis);
  auto accounts = OpenAccounts(store(), &clock);
  ASSERT_TRUE(accounts);
  const User user = MakeUser(*accounts, "quitter", 10000);
  {
    auto r = accounts->quota().Reserve(user, 500, "/v1/completions");
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->Release().ok());
  }
  auto days = accounts->quota().DailyUsage(user.id, 0);
  ASSERT_TRUE(days.ok());
  EXPECT_TRUE(days->empty());
}

RAGD_ON_BOTH_STORES(QuotaDurability);

}  // namespace
}  // namespace ragd::accounts
