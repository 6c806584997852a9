// The quota ledger's usage rows: written by the ledger's own thread (a
// report or settle never waits on SQLite), and checkpointed while a request
// runs, so a crash (a real SIGKILL of a child process here) loses at most the
// tokens since the last checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "accounts/db.h"
#include "test_support.h"

namespace ragd::accounts {
namespace {

using testing::MakeUser;
using testing::OpenAccounts;
using testing::TempDir;

// A user with a budget of 10000 tokens, made in the database at `path`.
User UserIn(const std::string& path, const Clock* clock, const std::string& name) {
  auto accounts = OpenAccounts(path, clock);
  return accounts ? MakeUser(*accounts, name, 10000) : User();
}

TEST(QuotaDurability, SettleDoesNotWaitForTheDatabase) {
  TempDir dir;
  ManualClock clock(testing::kNoonMillis);
  const User user = UserIn(dir.File("app.db"), &clock, "patient");
  auto db = Db::Open(dir.File("app.db"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::shared_ptr<Db> shared = std::move(db).value();
  QuotaLedger ledger(shared, &clock, QuotaOptions());
  auto reservation = ledger.Reserve(user, 100, "/v1/completions");
  ASSERT_TRUE(reservation.ok());
  {
    // Another writer holds the database (a slow disk, a long transaction):
    // the inference thread that reports and settles must not wait for it.
    auto busy = shared->Lock();
    auto settled = std::async(std::launch::async, [&] {
      reservation->Report(10, 1);
      return reservation->Settle(10, 20);
    });
    const bool returned = settled.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    busy.unlock();
    ASSERT_TRUE(returned) << "Settle waited for the database lock";
    EXPECT_TRUE(settled.get().ok());
  }
  EXPECT_EQ(ledger.GetStatus(user)->used, 30);
  ledger.Flush();
  auto days = ledger.DailyUsage(user.id, 0);
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].prompt_tokens, 10);
  EXPECT_EQ((*days)[0].completion_tokens, 20);
  EXPECT_EQ((*days)[0].requests, 1);
  EXPECT_EQ((*days)[0].successful_answers, 1);
}

TEST(QuotaDurability, ACrashKeepsTheTokensUpToTheLastCheckpoint) {
  TempDir dir;
  ManualClock clock(testing::kNoonMillis);
  const User user = UserIn(dir.File("app.db"), &clock, "crashy");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A server mid-answer: prompt computed, 45 tokens streamed, then killed.
    auto accounts = OpenAccounts(dir.File("app.db"), &clock);
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

  // Checkpoints at 101 tokens (the first report) and 133: the 12 tokens
  // after that were in memory only.
  auto accounts = OpenAccounts(dir.File("app.db"), &clock);
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

TEST(QuotaDurability, ARequestReleasedBeforeAnyTokenLeavesNoRow) {
  TempDir dir;
  ManualClock clock(testing::kNoonMillis);
  auto accounts = OpenAccounts(dir.File("app.db"), &clock);
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

}  // namespace
}  // namespace ragd::accounts
