// The quota ledger's usage rows: written by the ledger's own thread (a
// report or settle never waits for the store; the reservation's owner hears
// each row once it is written), and checkpointed while a request runs, so a
// crash (a real SIGKILL of a child process here) loses at most the tokens
// since the last checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

TEST_P(QuotaDurability, ReportAndSettleNeverWaitForAHeldDatabase) {
  LedgerOnStore f(store(), "patient");
  ASSERT_TRUE(f.ledger);
  auto reservation = f.ledger->Reserve(f.user, 100, "/v1/completions");
  ASSERT_TRUE(reservation.ok());
  {
    // Another writer holds the database (a slow disk, a long transaction):
    // the inference thread reports and settles all the same.
    auto busy = f.db->Lock();
    auto run = std::async(std::launch::async, [&] {
      reservation->Report(10, 1);
      reservation->Report(10, 17);
      return reservation->Settle(10, 20).ok();
    });
    const bool returned = run.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    EXPECT_EQ(reservation->written_tokens(), 0);  // nothing could be written yet
    busy.unlock();
    ASSERT_TRUE(returned) << "the ledger waited for the database lock";
    EXPECT_TRUE(run.get());
  }
  f.ledger->Flush();
  EXPECT_EQ(f.RowTokens(), 30);
  EXPECT_EQ(reservation->written_tokens(), 30);
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

// What generation_runner relies on to hold an answer back: the owner hears
// each row only once a second connection (a restarted server) can read it,
// in order, the last one marked final with the settled counts.
TEST_P(QuotaDurability, TheOwnerHearsEachRowOnceItIsInTheStore) {
  LedgerOnStore f(store(), "stalled");
  ASSERT_TRUE(f.ledger);
  auto r = f.ledger->Reserve(f.user, 1000, "/v1/chat/completions");
  ASSERT_TRUE(r.ok());
  struct Heard {
    int64_t tokens, on_disk;
    bool final;
  };
  std::mutex mu;
  std::vector<Heard> heard;
  r->OnWritten([&](int64_t tokens, bool final) {
    const int64_t on_disk = f.RowTokens();
    std::lock_guard<std::mutex> lock(mu);
    heard.push_back({tokens, on_disk, final});
  });
  {
    auto busy = f.db->Lock();  // held while the whole answer is generated
    for (int64_t completion = 1; completion <= 100; ++completion) r->Report(100, completion);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(heard.empty()) << "a row was announced before it could be written";
  }
  ASSERT_TRUE(r->Settle(100, 100).ok());
  f.ledger->Flush();
  std::lock_guard<std::mutex> lock(mu);
  // Checkpoints at 101 (the first token) and every kCheckpointTokens / 2
  // after it, then the final row.
  ASSERT_GE(heard.size(), 3u);
  EXPECT_EQ(heard.front().tokens, 101);
  for (size_t i = 0; i < heard.size(); ++i) {
    EXPECT_EQ(heard[i].on_disk, heard[i].tokens) << "row " << i;
    if (i > 0 && !heard[i].final) {
      EXPECT_EQ(heard[i].tokens - heard[i - 1].tokens, kCheckpointTokens / 2);
    }
    EXPECT_EQ(heard[i].final, i + 1 == heard.size());
  }
  EXPECT_EQ(heard.back().tokens, 200);
  EXPECT_EQ(r->written_tokens(), 200);
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
