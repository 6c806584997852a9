// The test PostgreSQL (header-only; ragd_test(... POSTGRES) links libpq).
// CTest starts one per build folder for the suites that need it (the
// postgres_server fixture in tests/CMakeLists.txt); a test binary run
// without it starts its own through tests/support/postgres-fixture, once
// per process, and stops it at exit. Each test gets a schema of its own, so
// tests sharing the server never see each other's tables.
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/test_paths.h"

namespace ragd::testing {

class PrivatePostgres {
 public:
  PrivatePostgres() {
    char pattern[] = "/tmp/ragd-pg-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    std::string command = Script() + " start " + dir_;
    if (FILE* out = popen(command.c_str(), "r")) {
      char line[512];
      if (std::fgets(line, sizeof line, out) != nullptr) conninfo_ = line;
      if (pclose(out) != 0) conninfo_.clear();
    }
    while (!conninfo_.empty() && conninfo_.back() == '\n') conninfo_.pop_back();
  }
  ~PrivatePostgres() {
    if (!dir_.empty() && owner_ == getpid()) std::system((Script() + " stop " + dir_).c_str());
  }
  const std::string& conninfo() const { return conninfo_; }

 private:
  static std::string Script() { return SourceDir() + "/tests/support/postgres-fixture"; }
  std::string dir_;
  std::string conninfo_;    // "" when it did not start (the tests then fail to connect)
  pid_t owner_ = getpid();  // a forked child must not stop its parent's server
};

// Whether a server answers at `conninfo`.
inline bool PostgresAnswers(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  const bool ok = PQstatus(conn) == CONNECTION_OK;
  PQfinish(conn);
  return ok;
}

// The libpq connection string of the test server's `postgres` database:
// $RAGD_TEST_POSTGRES, else CTest's (RAGD_TEST_POSTGRES_DIR) when it runs,
// else a private one.
inline std::string TestPostgres() {
  if (const char* env = std::getenv("RAGD_TEST_POSTGRES"); env != nullptr && *env != '\0') return env;
#ifdef RAGD_TEST_POSTGRES_DIR
  static const bool fixture = PostgresAnswers("host=" RAGD_TEST_POSTGRES_DIR " user=ragd dbname=postgres");
  if (fixture) return "host=" RAGD_TEST_POSTGRES_DIR " user=ragd dbname=postgres";
#endif
  static PrivatePostgres server;
  return server.conninfo();
}

// A connection string whose tables go to a new, empty schema; "" when the
// schema cannot be made (the error is printed).
inline std::string FreshPostgresSchema() {
  static std::atomic<int> counter{0};
  const std::string base = TestPostgres();
  const std::string schema = "t" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  PGconn* conn = PQconnectdb(base.c_str());
  PGresult* made = PQexec(conn, ("CREATE SCHEMA " + schema).c_str());
  const bool ok = PQresultStatus(made) == PGRES_COMMAND_OK;
  if (!ok) std::fprintf(stderr, "test postgres (%s): %s", base.c_str(), PQerrorMessage(conn));
  PQclear(made);
  PQfinish(conn);
  return ok ? base + " options='-c search_path=" + schema + "'" : "";
}

}  // namespace ragd::testing
