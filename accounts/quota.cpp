#include "accounts/quota.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "accounts/store_writer.h"

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
  std::shared_ptr<Db> db;
  const Clock* clock = nullptr;
  QuotaOptions options;

  // The usage rows of this ledger's open reservations, whose holds it renews.
  std::mutex holds_mu;               // a leaf: nothing is taken while it is held
  std::unordered_set<int64_t> open;  // guarded by holds_mu
  int64_t renewed_at = 0;            // guarded by holds_mu: clock seconds of the last renewal

  // The usage rows are written by a thread of the ledger's own, in the
  // order posted, never by the thread that reports or settles (the
  // inference thread must not wait on the store while the writer keeps up).
  // The same thread renews the holds every third of a lease.
  std::unique_ptr<StoreWriter> writer;  // last: its tasks use the rest

  ~Core() { writer.reset(); }  // writes what was posted

  void Start() {
    writer = std::make_unique<StoreWriter>(
        [this] {
          auto lock = db->Lock();
          RenewHolds(clock->NowSeconds(), /*only_if_due=*/false);
        },
        std::chrono::seconds(kHoldLeaseSeconds / 3));
  }

  void Post(std::function<void()> task) { writer->Post(std::move(task)); }
  void Flush() { writer->Flush(); }

  // Moves the lease of this ledger's open holds to `now` + kHoldLeaseSeconds;
  // `only_if_due`: unless that was done within the last third of a lease.
  // Caller holds the Db lock.
  void RenewHolds(int64_t now, bool only_if_due) {
    std::vector<int64_t> rows;
    {
      std::lock_guard<std::mutex> lock(holds_mu);
      if (only_if_due && now >= renewed_at && now < renewed_at + kHoldLeaseSeconds / 3) return;
      renewed_at = now;
      rows.assign(open.begin(), open.end());
    }
    for (int64_t row : rows) {
      Result<Statement> renew = db->Prepare("UPDATE usage SET held_until = ? WHERE id = ? AND held > 0");
      Status st = renew.status();
      if (renew.ok()) {
        renew->Bind(1, now + kHoldLeaseSeconds).Bind(2, row);
        st = renew->Run();
      }
      if (!st.ok()) {
        std::fprintf(stderr, "ragd: cannot renew the quota holds: %s\n", st.message().c_str());
        return;
      }
    }
  }

  // Writer thread: the totals of the row of a reservation; `last` ends its
  // hold, otherwise its lease moves on.
  void WriteRow(int64_t row, int64_t user_id, int64_t prompt, int64_t completion, int64_t time,
                bool completed, bool last) {
    auto lock = db->Lock();
    Result<Statement> update = db->Prepare(
        last ? "UPDATE usage SET prompt_tokens = ?, completion_tokens = ?, created_at = ?, completed = ?, "
               "held = 0, held_until = 0 WHERE id = ?"
             : "UPDATE usage SET prompt_tokens = ?, completion_tokens = ?, created_at = ?, completed = ?, "
               "held_until = ? WHERE id = ?");
    Status written = update.status();
    if (update.ok()) {
      update->Bind(1, prompt).Bind(2, completion).Bind(3, time).Bind(4, int64_t{completed ? 1 : 0});
      if (last) {
        update->Bind(5, row);
      } else {
        update->Bind(5, time + kHoldLeaseSeconds).Bind(6, row);
      }
      written = update->Run();
    }
    if (!written.ok())
      std::fprintf(stderr, "ragd: cannot record %lld tokens of user %lld: %s\n",
                   static_cast<long long>(prompt + completion), static_cast<long long>(user_id),
                   written.message().c_str());
  }

  // Writer thread: the row of a reservation that ended with nothing to charge.
  void DeleteRow(int64_t row) {
    auto lock = db->Lock();
    Result<Statement> remove = db->Prepare("DELETE FROM usage WHERE id = ?");
    Status st = remove.status();
    if (remove.ok()) {
      remove->Bind(1, row);
      st = remove->Run();
    }
    if (!st.ok()) std::fprintf(stderr, "ragd: cannot drop an empty usage row: %s\n", st.message().c_str());
  }

  struct Counts {
    int64_t used = 0;  // charged in the period of `now`
    int64_t held = 0;  // held beyond that by live holds
  };

  // The user's budget in use at `now`, leaving out the row `except` (0:
  // none). Caller holds the Db lock.
  Result<Counts> Count(int64_t user_id, int64_t now, int64_t except) {
    RenewHolds(now, /*only_if_due=*/true);  // ours are live whatever the clock did
    // One statement, so one snapshot: checkpoint writes of other replicas
    // move tokens from held to used without the user's row lock, and two
    // statements could see one side of such a move and not the other.
    // `held > 0` lets both engines use the partial index usage_holds.
    Result<Statement> sums = db->Prepare(
        "SELECT (SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM usage "
        "        WHERE user_id = ? AND created_at >= ? AND created_at < ? AND id <> ?), "
        "       (SELECT COALESCE(SUM(held - prompt_tokens - completion_tokens), 0) FROM usage "
        "        WHERE user_id = ? AND held > 0 AND held_until > ? AND held > prompt_tokens + "
        "completion_tokens "
        "        AND id <> ?)");
    if (!sums.ok()) return sums.status();
    sums->Bind(1, user_id).Bind(2, PeriodStart(options.period, now)).Bind(3, PeriodEnd(options.period, now));
    sums->Bind(4, except).Bind(5, user_id).Bind(6, now).Bind(7, except);
    Result<bool> row = sums->Step();
    if (!row.ok()) return row.status();
    Counts counts;
    if (*row) counts = Counts{sums->ColumnInt(0), sums->ColumnInt(1)};
    return counts;
  }

  // ResourceExhausted, with `refusal` filled, when `counts` leave no room
  // for `tokens` more within `limit`.
  Status CheckRoom(const Counts& counts, int64_t tokens, int64_t limit, int64_t now, Refusal* refusal) const {
    if (counts.used + counts.held + tokens <= limit) return Status::Ok();
    int64_t remaining = std::max<int64_t>(0, limit - counts.used - counts.held);
    int64_t resets_at = PeriodEnd(options.period, now);
    bool fits_later = counts.held > 0 && counts.used + tokens <= limit;
    int64_t retry_after = fits_later ? 1 : std::max<int64_t>(1, resets_at - now);
    if (refusal) *refusal = Refusal{retry_after, remaining};
    return Status::ResourceExhausted("token quota exceeded: this request needs " + std::to_string(tokens) +
                                     " tokens, " + std::to_string(remaining) + " remain until " +
                                     FormatUtcTime(resets_at));
  }

  // In one transaction that holds the user's row (the replicas' budget
  // checks of one user take turns): checks that `tokens` fit beside
  // everything but the row `except`, then runs `apply` (holding them).
  // Waits for the rows posted so far first, so that this ledger's own
  // settled requests count at their real size.
  Status HoldInTransaction(int64_t user_id, int64_t tokens, int64_t limit, int64_t except, Refusal* refusal,
                           const std::function<Status()>& apply) {
    Flush();
    const int64_t now = clock->NowSeconds();
    auto lock = db->Lock();
    return db->InTransaction([&]() -> Status {
      // A no-op write whose row lock serializes the checks of one user on
      // PostgreSQL; SQLite's write transaction already serializes them all.
      Result<Statement> turn = db->Prepare("UPDATE users SET disabled = disabled WHERE id = ?");
      if (!turn.ok()) return turn.status();
      turn->Bind(1, user_id);
      RAGD_RETURN_IF_ERROR(turn->Run());
      Result<Counts> counts = Count(user_id, now, except);
      if (!counts.ok()) return counts.status();
      RAGD_RETURN_IF_ERROR(CheckRoom(*counts, tokens, limit, now, refusal));
      return apply();
    });
  }

  // Ends the reservation of row `row`: posts its final write with prompt +
  // completion (or, when `record` is false, its removal); `progress` hears
  // when the final row is written.
  void Finish(int64_t row, int64_t user_id, int64_t prompt, int64_t completion, bool record, bool completed,
              std::shared_ptr<RowProgress> progress) {
    {
      std::lock_guard<std::mutex> lock(holds_mu);
      open.erase(row);
    }
    const int64_t now = clock->NowSeconds();
    if (!record) {
      Post([this, row] { DeleteRow(row); });
      return;
    }
    Post([this, row, user_id, prompt, completion, now, completed, progress = std::move(progress)] {
      WriteRow(row, user_id, prompt, completion, now, completed, /*last=*/true);
      progress->Written(prompt + completion, /*final=*/true);
    });
  }
};

// ---- Reservation ----

struct Reservation::State {
  std::shared_ptr<QuotaLedger::Core> core;
  int64_t user_id = 0;
  int64_t tokens = 0;
  int64_t limit = 0;  // the user's budget when reserved
  int64_t row = 0;    // the request's usage row, which holds the reservation
  std::atomic<int64_t> reported_prompt{0};
  std::atomic<int64_t> reported_completion{0};
  std::atomic<int64_t> checkpointed{0};  // tokens of the last checkpoint posted
  std::shared_ptr<RowProgress> progress = std::make_shared<RowProgress>();
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
  core->Post([core, row = state_->row, user = state_->user_id, prompt, completion, now,
              progress = state_->progress] {
    core->WriteRow(row, user, prompt, completion, now, /*completed=*/false, /*last=*/false);
    progress->Written(prompt + completion, /*final=*/false);
  });
}

Status Reservation::Settle(int64_t prompt_tokens, int64_t completion_tokens) {
  if (!active()) return Status::InvalidArgument("reservation already settled or released");
  if (prompt_tokens < 0 || completion_tokens < 0) return Status::InvalidArgument("token counts must be >= 0");
  state_->active = false;
  state_->core->Finish(state_->row, state_->user_id, prompt_tokens, completion_tokens,
                       /*record=*/true, /*completed=*/true, state_->progress);
  return Status::Ok();
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
  state_->core->Finish(state_->row, state_->user_id, prompt, completion,
                       /*record=*/prompt + completion > 0, /*completed=*/false, state_->progress);
  return Status::Ok();
}

Status Reservation::Resize(int64_t tokens, Refusal* refusal) {
  if (!active()) return Status::InvalidArgument("reservation already settled or released");
  if (tokens < 0) return Status::InvalidArgument("cannot reserve a negative number of tokens");
  QuotaLedger::Core& core = *state_->core;
  auto hold = [&]() -> Status {
    Result<Statement> update = core.db->Prepare("UPDATE usage SET held = ? WHERE id = ?");
    if (!update.ok()) return update.status();
    update->Bind(1, tokens).Bind(2, state_->row);
    return update->Run();
  };
  Status st;
  if (tokens > state_->tokens) {
    // The room is checked for the whole new size, as Reserve would.
    st = core.HoldInTransaction(state_->user_id, tokens, state_->limit, state_->row, refusal, hold);
  } else {
    auto lock = core.db->Lock();
    st = hold();
  }
  if (st.ok()) state_->tokens = tokens;
  return st;
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
  const int64_t limit = LimitFor(user);
  int64_t row = 0;
  Status held = core_->HoldInTransaction(user.id, tokens, limit, /*except=*/0, refusal, [&]() -> Status {
    const int64_t now = core_->clock->NowSeconds();
    Result<Statement> insert = core_->db->Prepare(
        "INSERT INTO usage (user_id, route, prompt_tokens, completion_tokens, created_at, completed, held, "
        "held_until) VALUES (?, ?, 0, 0, ?, 0, ?, ?) RETURNING id");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, user.id).Bind(2, route).Bind(3, now).Bind(4, tokens).Bind(5, now + kHoldLeaseSeconds);
    Result<bool> inserted = insert->Step();
    if (!inserted.ok()) return inserted.status();
    if (!*inserted) return Status::Internal("the usage row got no id");
    row = insert->ColumnInt(0);
    return Status::Ok();
  });
  if (!held.ok()) return held;
  {
    std::lock_guard<std::mutex> lock(core_->holds_mu);
    core_->open.insert(row);
  }
  auto state = std::make_unique<Reservation::State>();
  state->core = core_;
  state->user_id = user.id;
  state->tokens = tokens;
  state->limit = limit;
  state->row = row;
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
  core_->Flush();  // this ledger's settled requests count at their real size
  const int64_t now = core_->clock->NowSeconds();
  auto lock = core_->db->Lock();
  Result<Core::Counts> counts = core_->Count(user.id, now, /*except=*/0);
  if (!counts.ok()) return counts.status();
  status.used = counts->used;
  status.reserved = counts->held;
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
      "FROM usage WHERE user_id = ? AND created_at >= ? "
      "AND (prompt_tokens + completion_tokens > 0 OR completed = 1) "  // not the holds of requests yet to
                                                                       // start
      "GROUP BY day ORDER BY day");
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
