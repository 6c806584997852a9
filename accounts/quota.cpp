#include "accounts/quota.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace ragd::accounts {

// How much of one reservation's usage row has reached the store, and who is
// told: shared by the reservation and its queued writes, which may outlive it.
struct RowProgress {
  std::mutex mu;
  std::function<void(int64_t, bool)> listener;  // GUARDED_BY(mu)
  std::atomic<int64_t> tokens{0};               // prompt + completion of the last row written

  // Writer thread, after a write of the row (done or failed: a failure is
  // logged and the charge holds in memory, so waiting longer helps nobody).
  void Written(int64_t total, bool final) {
    tokens.store(total);
    std::function<void(int64_t, bool)> call;
    {
      std::lock_guard<std::mutex> lock(mu);
      call = listener;
    }
    if (call) call(total, final);
  }
};

// The ledger's shared state; Reservations hold it alive.
struct QuotaLedger::Core {
  struct Account {
    int64_t period_start = -1;  // period that `used` belongs to; -1 = not loaded
    int64_t used = 0;           // tokens charged in that period
    int64_t reserved = 0;       // tokens held by open reservations (any period)
  };

  std::shared_ptr<Db> db;
  const Clock* clock = nullptr;
  QuotaOptions options;

  std::mutex mu;                                  // taken before the Db lock, never after
  std::unordered_map<int64_t, Account> accounts;  // guarded by mu

  // The usage rows are written by one thread of the ledger's own, in the
  // order posted, never by the thread that reports or settles (the
  // inference thread must not wait on the store while the writer keeps up). A
  // reservation's row is written at its first checkpoint and updated at
  // each later one and at the end; see Reservation::Report for when a
  // reporter waits for them.
  std::mutex write_mu;
  std::condition_variable write_cv;
  std::deque<std::function<void()>> writes;  // guarded by write_mu
  bool writing = false;                      // guarded by write_mu: a task is running
  bool stopping = false;                     // guarded by write_mu
  std::thread writer;
  std::unordered_map<uint64_t, int64_t> row_of;  // writer thread only: reservation serial -> usage row id
  std::atomic<uint64_t> next_serial{1};

  ~Core() {
    {
      std::lock_guard<std::mutex> lock(write_mu);
      stopping = true;
    }
    write_cv.notify_all();
    if (writer.joinable()) writer.join();
  }

  void Start() {
    writer = std::thread([this] { WriterLoop(); });
  }

  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(write_mu);
      writes.push_back(std::move(task));
    }
    write_cv.notify_all();
  }

  // Returns once everything posted before has been written.
  void Flush() {
    std::unique_lock<std::mutex> lock(write_mu);
    write_cv.wait(lock, [&] { return writes.empty() && !writing; });
  }

  void WriterLoop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(write_mu);
        write_cv.wait(lock, [&] { return stopping || !writes.empty(); });
        if (writes.empty()) return;  // stopping, and everything written
        task = std::move(writes.front());
        writes.pop_front();
        writing = true;
      }
      task();
      {
        std::lock_guard<std::mutex> lock(write_mu);
        writing = false;
      }
      write_cv.notify_all();
    }
  }

  // Writer thread: the row of reservation `serial` with these totals,
  // inserted at its first write and updated afterwards; `last` ends it.
  void WriteRow(uint64_t serial, int64_t user_id, const std::string& route, int64_t prompt,
                int64_t completion, int64_t time, bool completed, bool last) {
    auto lock = db->Lock();
    auto it = row_of.find(serial);
    Status written;
    if (it == row_of.end()) {
      Result<Statement> insert = db->Prepare(
          "INSERT INTO usage (user_id, route, prompt_tokens, completion_tokens, created_at, completed) "
          "VALUES (?, ?, ?, ?, ?, ?) RETURNING id");
      written = insert.status();
      if (insert.ok()) {
        insert->Bind(1, user_id).Bind(2, route).Bind(3, prompt).Bind(4, completion).Bind(5, time);
        insert->Bind(6, int64_t{completed ? 1 : 0});
        Result<bool> row = insert->Step();
        written = row.status();
        if (row.ok() && *row && !last) row_of[serial] = insert->ColumnInt(0);
      }
    } else {
      Result<Statement> update = db->Prepare(
          "UPDATE usage SET prompt_tokens = ?, completion_tokens = ?, created_at = ?, completed = ? "
          "WHERE id = ?");
      written = update.status();
      if (update.ok()) {
        update->Bind(1, prompt).Bind(2, completion).Bind(3, time).Bind(4, int64_t{completed ? 1 : 0});
        update->Bind(5, it->second);
        written = update->Run();
      }
      if (last) row_of.erase(it);
    }
    if (!written.ok())
      std::fprintf(stderr, "ragd: cannot record %lld tokens of user %lld: %s\n",
                   static_cast<long long>(prompt + completion), static_cast<long long>(user_id),
                   written.message().c_str());
  }

  // The user's account moved to the period containing `now`; `used` is
  // reloaded from the usage rows when the period changed. Caller holds mu.
  Result<Account*> Touch(int64_t user_id, int64_t now) {
    Account& account = accounts[user_id];
    int64_t start = PeriodStart(options.period, now);
    if (account.period_start == start) return &account;
    Flush();  // the rows posted so far are in the sum
    auto lock = db->Lock();
    Result<Statement> query = db->Prepare(
        "SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM usage "
        "WHERE user_id = ? AND created_at >= ? AND created_at < ?");
    if (!query.ok()) return query.status();
    query->Bind(1, user_id).Bind(2, start).Bind(3, PeriodEnd(options.period, now));
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    account.used = *row ? query->ColumnInt(0) : 0;
    account.period_start = start;
    return &account;
  }

  // ResourceExhausted, with `refusal` filled, when `account` cannot hold
  // `tokens` more within `limit`. Caller holds mu.
  Status CheckRoom(const Account& account, int64_t tokens, int64_t limit, int64_t now,
                   Refusal* refusal) const {
    if (account.used + account.reserved + tokens <= limit) return Status::Ok();
    int64_t remaining = std::max<int64_t>(0, limit - account.used - account.reserved);
    int64_t resets_at = PeriodEnd(options.period, now);
    bool fits_later = account.reserved > 0 && account.used + tokens <= limit;
    int64_t retry_after = fits_later ? 1 : std::max<int64_t>(1, resets_at - now);
    if (refusal) *refusal = Refusal{retry_after, remaining};
    return Status::ResourceExhausted("token quota exceeded: this request needs " + std::to_string(tokens) +
                                     " tokens, " + std::to_string(remaining) + " remain until " +
                                     FormatUtcTime(resets_at));
  }

  // Ends a reservation of `reserved` tokens: charges prompt + completion and,
  // when `record`, posts the usage row (`progress` hears when it is
  // written). The account is moved to the current period first, so a reload
  // cannot count the new row twice.
  Status Finish(uint64_t serial, int64_t user_id, int64_t reserved, int64_t prompt, int64_t completion,
                const std::string& route, bool record, bool completed,
                std::shared_ptr<RowProgress> progress) {
    std::lock_guard<std::mutex> lock(mu);
    int64_t now = clock->NowSeconds();
    Result<Account*> touched = Touch(user_id, now);
    Account& account = accounts[user_id];  // same entry; still valid when the reload failed
    account.reserved -= reserved;
    account.used += prompt + completion;
    // Posted under mu, after Touch: a reload cannot count this row twice.
    if (record)
      Post(
          [this, serial, user_id, route, prompt, completion, now, completed, progress = std::move(progress)] {
            WriteRow(serial, user_id, route, prompt, completion, now, completed, /*last=*/true);
            progress->Written(prompt + completion, /*final=*/true);
          });
    return touched.status();
  }
};

// ---- Reservation ----

struct Reservation::State {
  std::shared_ptr<QuotaLedger::Core> core;
  int64_t user_id = 0;
  int64_t tokens = 0;
  int64_t limit = 0;  // the user's budget when reserved
  std::string route;
  std::atomic<int64_t> reported_prompt{0};
  std::atomic<int64_t> reported_completion{0};
  std::atomic<int64_t> checkpointed{0};  // tokens of the last checkpoint posted
  std::shared_ptr<RowProgress> progress = std::make_shared<RowProgress>();
  uint64_t serial = 0;  // names the reservation's usage row
  bool active = true;
};

Reservation::Reservation() = default;
Reservation::Reservation(std::unique_ptr<State> state) : state_(std::move(state)) {}
Reservation::Reservation(Reservation&&) noexcept = default;

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    (void)Release();
    state_ = std::move(other.state_);
  }
  return *this;
}

Reservation::~Reservation() { (void)Release(); }

bool Reservation::active() const { return state_ && state_->active; }
int64_t Reservation::tokens() const { return state_ ? state_->tokens : 0; }
int64_t Reservation::user_id() const { return state_ ? state_->user_id : 0; }

void Reservation::Report(int64_t prompt_tokens, int64_t completion_tokens) {
  if (!state_) return;
  const int64_t prompt = std::max<int64_t>(0, prompt_tokens),
                completion = std::max<int64_t>(0, completion_tokens);
  state_->reported_prompt.store(prompt);
  state_->reported_completion.store(completion);
  // A checkpoint at the first report and every kCheckpointTokens / 2 after
  // it: while the writer keeps up, a caller that holds back what is more
  // than kCheckpointTokens - 1 past the row written never has to hold back.
  const int64_t total = prompt + completion;
  int64_t last = state_->checkpointed.load();
  if (total == 0 || (last != 0 && total < last + kCheckpointTokens / 2)) return;
  if (!state_->checkpointed.compare_exchange_strong(last, total)) return;  // another thread took this one
  QuotaLedger::Core* core = state_->core.get();
  const int64_t now = core->clock->NowSeconds();
  core->Post([core, serial = state_->serial, user = state_->user_id, route = state_->route, prompt,
              completion, now, progress = state_->progress] {
    core->WriteRow(serial, user, route, prompt, completion, now, /*completed=*/false, /*last=*/false);
    progress->Written(prompt + completion, /*final=*/false);
  });
}

Status Reservation::Settle(int64_t prompt_tokens, int64_t completion_tokens) {
  if (!active()) return Status::InvalidArgument("reservation already settled or released");
  if (prompt_tokens < 0 || completion_tokens < 0) return Status::InvalidArgument("token counts must be >= 0");
  state_->active = false;
  return state_->core->Finish(state_->serial, state_->user_id, state_->tokens, prompt_tokens,
                              completion_tokens, state_->route,
                              /*record=*/true, /*completed=*/true, state_->progress);
}

void Reservation::OnWritten(std::function<void(int64_t tokens, bool final)> listener) {
  if (!state_) return;
  std::lock_guard<std::mutex> lock(state_->progress->mu);
  state_->progress->listener = std::move(listener);
}

int64_t Reservation::written_tokens() const { return state_ ? state_->progress->tokens.load() : 0; }

Status Reservation::Release() {
  if (!active()) return Status::Ok();
  state_->active = false;
  int64_t prompt = state_->reported_prompt.load();
  int64_t completion = state_->reported_completion.load();
  return state_->core->Finish(state_->serial, state_->user_id, state_->tokens, prompt, completion,
                              state_->route,
                              /*record=*/prompt + completion > 0, /*completed=*/false, state_->progress);
}

Status Reservation::Resize(int64_t tokens, Refusal* refusal) {
  if (!active()) return Status::InvalidArgument("reservation already settled or released");
  if (tokens < 0) return Status::InvalidArgument("cannot reserve a negative number of tokens");
  QuotaLedger::Core& core = *state_->core;
  std::lock_guard<std::mutex> lock(core.mu);
  const int64_t now = core.clock->NowSeconds();
  Result<QuotaLedger::Core::Account*> touched = core.Touch(state_->user_id, now);
  if (!touched.ok()) return touched.status();
  QuotaLedger::Core::Account& account = **touched;
  const int64_t extra = tokens - state_->tokens;
  if (extra > 0) {
    // The room is checked for the whole new size, as Reserve would.
    account.reserved -= state_->tokens;
    Status room = core.CheckRoom(account, tokens, state_->limit, now, refusal);
    account.reserved += state_->tokens;
    if (!room.ok()) return room;
  }
  account.reserved += extra;
  state_->tokens = tokens;
  return Status::Ok();
}

// ---- QuotaLedger ----

QuotaLedger::QuotaLedger(std::shared_ptr<Db> db, const Clock* clock, QuotaOptions options)
    : core_(std::make_shared<Core>()) {
  core_->db = std::move(db);
  core_->clock = clock;
  core_->options = options;
  core_->Start();
}

void QuotaLedger::Flush() { core_->Flush(); }

// The rows posted so far are written before the ledger goes (its thread
// lives on while reservations hold its state).
QuotaLedger::~QuotaLedger() { core_->Flush(); }

int64_t QuotaLedger::LimitFor(const User& user) const {
  return user.token_quota.value_or(core_->options.tokens_per_period);
}

Result<Reservation> QuotaLedger::Reserve(const User& user, int64_t tokens, std::string route,
                                         Refusal* refusal) {
  if (tokens < 0) return Status::InvalidArgument("cannot reserve a negative number of tokens");
  int64_t limit = LimitFor(user);
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    int64_t now = core_->clock->NowSeconds();
    Result<Core::Account*> touched = core_->Touch(user.id, now);
    if (!touched.ok()) return touched.status();
    Core::Account& account = **touched;
    if (Status st = core_->CheckRoom(account, tokens, limit, now, refusal); !st.ok()) return st;
    account.reserved += tokens;
  }
  auto state = std::make_unique<Reservation::State>();
  state->core = core_;
  state->user_id = user.id;
  state->tokens = tokens;
  state->limit = limit;
  state->serial = core_->next_serial++;
  state->route = std::move(route);
  return Reservation(std::move(state));
}

Status QuotaLedger::Settle(Reservation& reservation, int64_t prompt_tokens, int64_t completion_tokens) {
  return reservation.Settle(prompt_tokens, completion_tokens);
}

Status QuotaLedger::Charge(const User& user, int64_t prompt_tokens, int64_t completion_tokens,
                           std::string route, Refusal* refusal) {
  if (prompt_tokens < 0 || completion_tokens < 0) return Status::InvalidArgument("token counts must be >= 0");
  Result<Reservation> reservation =
      Reserve(user, prompt_tokens + completion_tokens, std::move(route), refusal);
  if (!reservation.ok()) return reservation.status();
  return reservation->Settle(prompt_tokens, completion_tokens);
}

Result<QuotaStatus> QuotaLedger::GetStatus(const User& user) {
  QuotaStatus status;
  status.limit = LimitFor(user);
  status.period = core_->options.period;
  std::lock_guard<std::mutex> lock(core_->mu);
  int64_t now = core_->clock->NowSeconds();
  Result<Core::Account*> touched = core_->Touch(user.id, now);
  if (!touched.ok()) return touched.status();
  status.used = (*touched)->used;
  status.reserved = (*touched)->reserved;
  status.remaining = std::max<int64_t>(0, status.limit - status.used - status.reserved);
  status.period_start = PeriodStart(status.period, now);
  status.resets_at = PeriodEnd(status.period, now);
  return status;
}

Result<std::vector<DayUsage>> QuotaLedger::DailyUsage(int64_t user_id, int64_t since_unix_s) {
  core_->Flush();  // the rows of requests settled so far are in the sums
  auto lock = core_->db->Lock();
  Result<Statement> query = core_->db->Prepare(
      "SELECT created_at / 86400 AS day, SUM(prompt_tokens), SUM(completion_tokens), COUNT(*), "
      "SUM(CASE WHEN completed = 1 AND route <> '/v1/embeddings' THEN 1 ELSE 0 END) "
      "FROM usage WHERE user_id = ? AND created_at >= ? GROUP BY day ORDER BY day");
  if (!query.ok()) return query.status();
  query->Bind(1, user_id).Bind(2, since_unix_s);
  std::vector<DayUsage> days;
  for (;;) {
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    DayUsage day;
    day.day = FormatUtcDay(query->ColumnInt(0) * 86400);  // days since the epoch, UTC
    day.prompt_tokens = query->ColumnInt(1);
    day.completion_tokens = query->ColumnInt(2);
    day.requests = query->ColumnInt(3);
    day.successful_answers = query->ColumnInt(4);
    days.push_back(std::move(day));
  }
  return days;
}

Result<UsageReport> QuotaLedger::GetUsage(const User& user, int64_t days) {
  UsageReport report;
  Result<QuotaStatus> status = GetStatus(user);
  if (!status.ok()) return status.status();
  report.quota = *status;
  int64_t today = PeriodStart(Period::kDay, core_->clock->NowSeconds());
  Result<std::vector<DayUsage>> rows = DailyUsage(user.id, today - (std::max<int64_t>(days, 1) - 1) * 86400);
  if (!rows.ok()) return rows.status();
  report.days = std::move(*rows);
  return report;
}

}  // namespace ragd::accounts
