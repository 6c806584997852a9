// `ragd user ...`: manage accounts in the data folder's app.db (or in the
// PostgreSQL database of storage.postgres_url), with the server stopped or
// running. Every change takes effect on the server's next request (it reads
// credentials from the store on each one); SQLite's WAL and busy timeout let
// both processes write.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "accounts/accounts.h"
#include "accounts/secrets.h"
#include "app/cli/commands.h"
#include "app/config/config_flags.h"

namespace ragd::app {
namespace {

constexpr const char* kUsage =
    "ragd user [--data DIR] <command> ...\n"
    "  list                          users with role, state and quota\n"
    "  create NAME [--role R] [--quota N] [--password-stdin | --no-password]\n"
    "                                prints the new API key (and the password when generated)\n"
    "  disable NAME | enable NAME    a disabled user's keys and sessions stop working\n"
    "  reset-password NAME [--password-stdin]\n"
    "                                ends the user's sessions; prints a generated password\n"
    "  end-sessions NAME             signs the user out everywhere\n"
    "  keys NAME                     the user's API keys (id, prefix, name)\n"
    "  create-key NAME [--name LABEL]\n"
    "  revoke-key NAME KEY_ID\n"
    "  set-quota NAME N|default      token budget per period\n"
    "  set-role NAME user|admin\n"
    "  import-app-db [FILE]          copies every account, key, session, usage row and\n"
    "                                conversation of FILE (default <data>/app.db) into the\n"
    "                                empty PostgreSQL database of storage.postgres_url";

using accounts::Accounts;
using accounts::User;

int Fail(const Status& st) {
  std::fprintf(stderr, "ragd user: %s\n", st.message().c_str());
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

int Usage(const std::string& why) {
  std::fprintf(stderr, "ragd user: %s\n%s\n", why.c_str(), kUsage);
  return 2;
}

// The new password: one line from stdin, or a generated one (printed).
Result<std::string> NewPassword(const Flags& flags, bool* generated) {
  *generated = !flags.Has("--password-stdin");
  if (*generated) return accounts::RandomToken(18);
  std::string line;
  if (!std::getline(std::cin, line)) return Status::InvalidArgument("no password on stdin");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  RAGD_RETURN_IF_ERROR(accounts::ValidatePassword(line));
  return line;
}

Result<int64_t> ParseId(const std::string& text, const char* what) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return static_cast<int64_t>(v);
  } catch (...) {
  }
  return Status::InvalidArgument(std::string(what) + " must be a number, got \"" + text + "\"");
}

std::string QuotaText(const User& u) { return u.token_quota ? std::to_string(*u.token_quota) : "default"; }

int List(Accounts& accounts) {
  auto users = accounts.users().List();
  if (!users.ok()) return Fail(users.status());
  std::printf("%-6s %-24s %-6s %-9s %s\n", "id", "username", "role", "state", "token_quota");
  for (const User& u : *users)
    std::printf("%-6lld %-24s %-6s %-9s %s\n", static_cast<long long>(u.id), u.username.c_str(),
                std::string(accounts::RoleName(u.role)).c_str(), u.disabled ? "disabled" : "active",
                QuotaText(u).c_str());
  return 0;
}

int Create(Accounts& accounts, const Flags& flags, const std::string& name) {
  accounts::NewUser nu;
  nu.username = name;
  auto role = accounts::ParseRole(flags.Get("--role").value_or("user"));
  if (!role.ok()) return Fail(role.status());
  nu.role = *role;
  if (auto quota = flags.Get("--quota")) {
    auto q = ParseId(*quota, "--quota");
    if (!q.ok()) return Fail(q.status());
    nu.token_quota = *q;
  }
  bool generated = false;
  if (!flags.Has("--no-password")) {
    auto password = NewPassword(flags, &generated);
    if (!password.ok()) return Fail(password.status());
    nu.password = *password;
  }
  auto user = accounts.users().Create(nu);
  if (!user.ok()) return Fail(user.status());
  auto key = accounts.api_keys().Create(user->id, "created by ragd user");
  if (!key.ok()) return Fail(key.status());
  std::printf("created user %s (id %lld, %s)\n", user->username.c_str(), static_cast<long long>(user->id),
              std::string(accounts::RoleName(user->role)).c_str());
  if (generated) std::printf("password: %s\n", nu.password.c_str());
  std::printf("api key: %s\n", key->key.c_str());
  return 0;
}

int Keys(Accounts& accounts, const User& user) {
  auto keys = accounts.api_keys().List(user.id);
  if (!keys.ok()) return Fail(keys.status());
  std::printf("%-6s %-10s %s\n", "id", "prefix", "name");
  for (const auto& k : *keys)
    std::printf("%-6lld %-10s %s\n", static_cast<long long>(k.id), k.prefix.c_str(), k.name.c_str());
  return 0;
}

// The commands that act on one existing user.
int OnUser(Accounts& accounts, const Flags& flags, const std::string& command, const User& user,
           const std::vector<std::string>& rest) {
  const auto done = [&](const Status& st, const std::string& what) {
    if (!st.ok()) return Fail(st);
    std::printf("%s: %s\n", user.username.c_str(), what.c_str());
    return 0;
  };
  if (command == "disable") return done(accounts.SetDisabled(user.id, true), "disabled, sessions ended");
  if (command == "enable") return done(accounts.SetDisabled(user.id, false), "enabled");
  if (command == "end-sessions") return done(accounts.sessions().LogoutAll(user.id), "sessions ended");
  if (command == "keys") return Keys(accounts, user);
  if (command == "reset-password") {
    bool generated = false;
    auto password = NewPassword(flags, &generated);
    if (!password.ok()) return Fail(password.status());
    if (int rc = done(accounts.ResetPassword(user.id, *password), "password changed, sessions ended"))
      return rc;
    if (generated) std::printf("password: %s\n", password->c_str());
    return 0;
  }
  if (command == "create-key") {
    auto key = accounts.api_keys().Create(user.id, flags.Get("--name").value_or(""));
    if (!key.ok()) return Fail(key.status());
    std::printf("key %lld: %s\n", static_cast<long long>(key->info.id), key->key.c_str());
    return 0;
  }
  if (rest.size() != 1) return Usage(command + " takes one more argument");
  if (command == "revoke-key") {
    auto id = ParseId(rest[0], "KEY_ID");
    if (!id.ok()) return Fail(id.status());
    return done(accounts.api_keys().Revoke(user.id, *id), "key " + rest[0] + " revoked");
  }
  if (command == "set-quota") {
    std::optional<int64_t> quota;
    if (rest[0] != "default") {
      auto q = ParseId(rest[0], "the quota");
      if (!q.ok()) return Fail(q.status());
      quota = *q;
    }
    return done(accounts.users().SetTokenQuota(user.id, quota), "token quota " + rest[0]);
  }
  if (command == "set-role") {
    auto role = accounts::ParseRole(rest[0]);
    if (!role.ok()) return Fail(role.status());
    return done(accounts.SetRole(user.id, *role), "role " + rest[0]);
  }
  return Usage("unknown command \"" + command + "\"");
}

// Moves a single server's accounts to PostgreSQL (docs/scale-out.md).
int ImportAppDb(const std::string& path, const std::string& postgres_url) {
  if (postgres_url.empty())
    return Fail(Status::InvalidArgument("import-app-db needs storage.postgres_url (the destination)"));
  if (!std::filesystem::exists(path)) return Fail(Status::NotFound("no accounts database at " + path));
  auto from = accounts::Db::Open(path);
  if (!from.ok()) return Fail(from.status());
  auto to = accounts::Db::OpenPostgres(postgres_url);
  if (!to.ok()) return Fail(to.status());
  auto copied = accounts::Db::Copy(**from, **to);
  if (!copied.ok()) return Fail(copied.status());
  std::printf("copied from %s:", path.c_str());
  for (const auto& [table, rows] : *copied)
    std::printf(" %s %lld", table.c_str(), static_cast<long long>(rows));
  std::printf("\n");
  return 0;
}

}  // namespace

int RunUser(const std::vector<std::string>& args) {
  Flags flags(kUsage,
              "Manages the accounts in <data>/app.db or storage.postgres_url (the server may be running).");
  AddConfigFlags(flags);
  flags.Value("--role", "", "create: user (default) or admin");
  flags.Value("--quota", "", "create: token budget per period (default: quota.tokens_per_period)");
  flags.Value("--name", "", "create-key: a label for the key");
  flags.Bool("--password-stdin", "", "read the password from the first line of stdin");
  flags.Bool("--no-password", "", "create: API keys only, no browser sign-in");
  if (auto code = ParseOrExit(flags, args)) return *code;
  const std::vector<std::string>& pos = flags.positional();
  if (pos.empty()) return Usage("give a command");
  auto config = ConfigFromFlags(flags);
  if (!config.ok()) return Fail(config.status());

  const std::string db_path = config->data_dir + "/app.db";
  const std::string& postgres_url = config->storage.postgres_url;
  if (pos[0] == "import-app-db") {
    if (pos.size() > 2) return Usage("import-app-db takes at most one file");
    return ImportAppDb(pos.size() == 2 ? pos[1] : db_path, postgres_url);
  }
  if (postgres_url.empty() && pos[0] != "create" && !std::filesystem::exists(db_path))
    return Fail(Status::NotFound("no accounts database at " + db_path + " (wrong --data?)"));
  accounts::AccountsOptions options;
  options.db_path = db_path;
  options.postgres_url = postgres_url;
  auto opened = Accounts::Open(options);
  if (!opened.ok()) return Fail(opened.status());
  Accounts& accounts = **opened;

  const std::string& command = pos[0];
  if (command == "list") return pos.size() == 1 ? List(accounts) : Usage("list takes no argument");
  if (pos.size() < 2) return Usage(command + " needs a user name");
  if (command == "create")
    return pos.size() == 2 ? Create(accounts, flags, pos[1]) : Usage("create takes one name");
  auto user = accounts.users().GetByName(pos[1]);
  if (!user.ok()) return Fail(user.status());
  return OnUser(accounts, flags, command, *user, std::vector<std::string>(pos.begin() + 2, pos.end()));
}

}  // namespace ragd::app
