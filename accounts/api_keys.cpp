#include "accounts/api_keys.h"

#include <utility>

#include "accounts/secrets.h"

namespace ragd::accounts {
namespace {

constexpr size_t kDisplayPrefixLength = 8;

}  // namespace

bool IsWellFormedApiKey(std::string_view key) {
  if (key.substr(0, kApiKeyPrefix.size()) != kApiKeyPrefix) return false;
  std::string_view body = key.substr(kApiKeyPrefix.size());
  if (body.size() < 32 || body.size() > 200) return false;
  for (char c : body) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

ApiKeyStore::ApiKeyStore(std::shared_ptr<Db> db, UserStore* users, const Clock* clock)
    : db_(std::move(db)), users_(users), clock_(clock) {}

Result<NewApiKey> ApiKeyStore::Create(int64_t user_id, std::string_view name) {
  return Import(user_id, std::string(kApiKeyPrefix) + RandomToken(32), name);
}

Result<NewApiKey> ApiKeyStore::Import(int64_t user_id, std::string_view key, std::string_view name) {
  if (!IsWellFormedApiKey(key)) {
    return Status::InvalidArgument("an API key is \"rk-\" followed by 32-200 characters of [A-Za-z0-9_-]");
  }
  Result<User> owner = users_->Get(user_id);
  if (!owner.ok()) return owner.status();
  TokenHash hash = HashToken(key, TokenPurpose::kApiKey);
  NewApiKey made;
  made.key = std::string(key);
  made.info.user_id = user_id;
  made.info.prefix = made.key.substr(0, kDisplayPrefixLength);
  made.info.name = std::string(name);
  made.info.created_at = clock_->NowSeconds();
  auto lock = db_->Lock();
  Result<Statement> insert = db_->Prepare(
      "INSERT INTO api_keys (user_id, key_hash, prefix, name, created_at) VALUES (?, ?, ?, ?, ?) RETURNING "
      "id");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, user_id).BindBlob(2, hash.data(), hash.size());
  insert->Bind(3, std::string_view(made.info.prefix)).Bind(4, name).Bind(5, made.info.created_at);
  Result<bool> row = insert->Step();
  if (row.status().code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("this API key is already stored");
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("the new API key has no id");
  made.info.id = insert->ColumnInt(0);
  return made;
}

Result<User> ApiKeyStore::Authenticate(std::string_view key) {
  const Status denied = Status::Unauthenticated("invalid API key");
  if (!IsWellFormedApiKey(key)) return denied;
  TokenHash hash = HashToken(key, TokenPurpose::kApiKey);
  int64_t user_id = 0;
  {
    auto lock = db_->Lock();
    Result<Statement> query = db_->Prepare("SELECT user_id FROM api_keys WHERE key_hash = ?");
    if (!query.ok()) return query.status();
    query->BindBlob(1, hash.data(), hash.size());
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) return denied;
    user_id = query->ColumnInt(0);
  }
  Result<User> user = users_->Get(user_id);
  if (!user.ok()) return user.status().code() == StatusCode::kNotFound ? denied : user.status();
  if (user->disabled) return denied;
  return user;
}

Result<std::vector<ApiKeyInfo>> ApiKeyStore::List(int64_t user_id) {
  auto lock = db_->Lock();
  Result<Statement> query = db_->Prepare(
      "SELECT id, user_id, prefix, name, created_at FROM api_keys WHERE user_id = ? ORDER BY id");
  if (!query.ok()) return query.status();
  query->Bind(1, user_id);
  std::vector<ApiKeyInfo> keys;
  for (;;) {
    Result<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    ApiKeyInfo info;
    info.id = query->ColumnInt(0);
    info.user_id = query->ColumnInt(1);
    info.prefix = query->ColumnText(2);
    info.name = query->ColumnText(3);
    info.created_at = query->ColumnInt(4);
    keys.push_back(std::move(info));
  }
  return keys;
}

Status ApiKeyStore::Revoke(int64_t user_id, int64_t key_id) {
  auto lock = db_->Lock();
  Result<Statement> del = db_->Prepare("DELETE FROM api_keys WHERE id = ? AND user_id = ?");
  if (!del.ok()) return del.status();
  del->Bind(1, key_id).Bind(2, user_id);
  RAGD_RETURN_IF_ERROR(del->Run());
  if (db_->Changes() == 0) return Status::NotFound("no API key " + std::to_string(key_id) + " for this user");
  return Status::Ok();
}

}  // namespace ragd::accounts
