#include "accounts/users.h"

#include <functional>
#include <utility>

#include "accounts/secrets.h"

namespace ragd::accounts {
namespace {

constexpr const char* kUserColumns =
    "id, username, role, token_quota, created_at, disabled, password_hash IS NOT NULL";

User ReadUser(const Statement& row) {
  User user;
  user.id = row.ColumnInt(0);
  user.username = row.ColumnText(1);
  user.role = row.ColumnText(2) == "admin" ? Role::kAdmin : Role::kUser;
  user.token_quota = row.ColumnOptionalInt(3);
  user.created_at = row.ColumnInt(4);
  user.disabled = row.ColumnInt(5) != 0;
  user.has_password = row.ColumnInt(6) != 0;
  return user;
}

Status CheckQuota(std::optional<int64_t> quota) {
  if (quota && *quota < 0) return Status::InvalidArgument("token_quota must be >= 0");
  return Status::Ok();
}

}  // namespace

std::string_view RoleName(Role role) { return role == Role::kAdmin ? "admin" : "user"; }

Result<Role> ParseRole(std::string_view name) {
  if (name == "admin") return Role::kAdmin;
  if (name == "user") return Role::kUser;
  return Status::InvalidArgument("role must be \"user\" or \"admin\"");
}

Status ValidateUsername(std::string_view username) {
  if (username.empty() || username.size() > 64) {
    return Status::InvalidArgument("username must be 1-64 characters");
  }
  for (char c : username) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok) return Status::InvalidArgument("username may contain only A-Z a-z 0-9 _ . -");
  }
  return Status::Ok();
}

Status ValidatePassword(std::string_view password) {
  if (password.size() < 8) return Status::InvalidArgument("password must be at least 8 characters");
  if (password.size() > 1024) return Status::InvalidArgument("password must be at most 1024 bytes");
  return Status::Ok();
}

UserStore::UserStore(std::shared_ptr<Db> db, const Clock* clock) : db_(std::move(db)), clock_(clock) {}

Result<User> UserStore::Create(const NewUser& user) {
  RAGD_RETURN_IF_ERROR(ValidateUsername(user.username));
  RAGD_RETURN_IF_ERROR(CheckQuota(user.token_quota));
  std::optional<std::string> hash;
  if (!user.password.empty()) {
    RAGD_RETURN_IF_ERROR(ValidatePassword(user.password));
    Result<std::string> hashed = HashPassword(user.password);
    if (!hashed.ok()) return hashed.status();
    hash = std::move(*hashed);
  }
  int64_t id = 0;
  {
    auto lock = db_->Lock();
    Result<Statement> insert = db_->Prepare(
        "INSERT INTO users (username, role, password_hash, token_quota, created_at) VALUES (?, ?, ?, ?, ?) "
        "RETURNING id");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, user.username).Bind(2, RoleName(user.role)).Bind(4, user.token_quota);
    insert->Bind(5, clock_->NowSeconds());
    if (hash) insert->Bind(3, std::string_view(*hash));
    Result<bool> row = insert->Step();
    if (row.status().code() == StatusCode::kAlreadyExists) {
      return Status::AlreadyExists("user \"" + user.username + "\" already exists");
    }
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("the new user has no id");
    id = insert->ColumnInt(0);
  }
  return Get(id);
}

Result<User> UserStore::Get(int64_t id) {
  auto lock = db_->Lock();
  std::string sql = std::string("SELECT ") + kUserColumns + " FROM users WHERE id = ?";
  Result<Statement> query = db_->Prepare(sql.c_str());
  if (!query.ok()) return query.status();
  query->Bind(1, id);
  Result<bool> row = query->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no user with id " + std::to_string(id));
  return ReadUser(*query);
}

Result<User> UserStore::GetByName(std::string_view username) {
  auto lock = db_->Lock();
  std::string sql = std::string("SELECT ") + kUserColumns + " FROM users WHERE username = ?";
  Result<Statement> query = db_->Prepare(sql.c_str());
  if (!query.ok()) return query.status();
  query->Bind(1, username);
  Result<bool> row = query->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no user named \"" + std::string(username) + "\"");
  return ReadUser(*query);
}

Result<std::vector<User>> UserStore::List() {
  auto lock = db_->Lock();
  std::string sql = std::string("SELECT ") + kUserColumns + " FROM users ORDER BY id";
  Result<Statement> query = db_->Prepare(sql.c_str());
  if (!query.ok()) return query.status();
  std::vector<User> users;
  for (;;) {
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    users.push_back(ReadUser(*query));
  }
  return users;
}

Result<bool> UserStore::AnyAdmin() {
  auto lock = db_->Lock();
  Result<Statement> query = db_->Prepare("SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin')");
  if (!query.ok()) return query.status();
  Result<bool> row = query->Step();
  if (!row.ok()) return row.status();
  return *row && query->ColumnInt(0) != 0;
}

namespace {

// Runs an UPDATE of one user row; NotFound when no row matched.
Status UpdateUser(Db& db, const char* sql, int64_t id, const std::function<void(Statement&)>& bind) {
  auto lock = db.Lock();
  Result<Statement> update = db.Prepare(sql);
  if (!update.ok()) return update.status();
  bind(*update);
  update->Bind(2, id);
  RAGD_RETURN_IF_ERROR(update->Run());
  if (db.Changes() == 0) return Status::NotFound("no user with id " + std::to_string(id));
  return Status::Ok();
}

}  // namespace

Status UserStore::SetTokenQuota(int64_t id, std::optional<int64_t> token_quota) {
  RAGD_RETURN_IF_ERROR(CheckQuota(token_quota));
  return UpdateUser(*db_, "UPDATE users SET token_quota = ? WHERE id = ?", id,
                    [&](Statement& s) { s.Bind(1, token_quota); });
}

Status UserStore::SetDisabled(int64_t id, bool disabled) {
  return UpdateUser(*db_, "UPDATE users SET disabled = ? WHERE id = ?", id,
                    [&](Statement& s) { s.Bind(1, int64_t{disabled ? 1 : 0}); });
}

Status UserStore::SetPassword(int64_t id, std::string_view password) {
  RAGD_RETURN_IF_ERROR(ValidatePassword(password));
  Result<std::string> hash = HashPassword(password);
  if (!hash.ok()) return hash.status();
  return UpdateUser(*db_, "UPDATE users SET password_hash = ? WHERE id = ?", id,
                    [&](Statement& s) { s.Bind(1, std::string_view(*hash)); });
}

Status UserStore::SetRole(int64_t id, Role role) {
  return UpdateUser(*db_, "UPDATE users SET role = ? WHERE id = ?", id,
                    [&](Statement& s) { s.Bind(1, RoleName(role)); });
}

Result<int64_t> UserStore::CountActiveAdmins() {
  auto lock = db_->Lock();
  Result<Statement> query = db_->Prepare("SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0");
  if (!query.ok()) return query.status();
  Result<bool> row = query->Step();
  if (!row.ok()) return row.status();
  return *row ? query->ColumnInt(0) : 0;
}

Result<User> UserStore::CheckPassword(std::string_view username, std::string_view password) {
  const Status denied = Status::Unauthenticated("invalid username or password");
  std::optional<User> user;
  std::string hash;
  {
    auto lock = db_->Lock();
    std::string sql = std::string("SELECT ") + kUserColumns + ", password_hash FROM users WHERE username = ?";
    Result<Statement> query = db_->Prepare(sql.c_str());
    if (!query.ok()) return query.status();
    query->Bind(1, username);
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (*row && !query->ColumnIsNull(7)) {
      user = ReadUser(*query);
      hash = query->ColumnText(7);
    }
  }
  if (!user || password.size() > 1024) {
    BurnPasswordCheck(password.substr(0, 1024));
    return denied;
  }
  if (!VerifyPassword(hash, password) || user->disabled) return denied;
  return *user;
}

}  // namespace ragd::accounts
