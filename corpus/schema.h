// Internal: the store's SQLite schema and its migrations.
#pragma once

#include "common/status.h"
#include "corpus/sqlite_db.h"

namespace ragd::corpus::internal {

// The schema version this build writes (PRAGMA user_version after migrating).
int LatestSchemaVersion();

// Brings the database up to LatestSchemaVersion(), one transaction per step.
// kUnsupported when the file was written by a newer build.
Status MigrateSchema(Db& db);

}  // namespace ragd::corpus::internal
