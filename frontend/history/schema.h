// The history database's schema and its migrations. Each migration moves a file from
// version N-1 to N; opening a file runs the missing ones in one write transaction, so two
// processes opening a new file at once migrate it exactly once.
#pragma once

#include <sqlite3.h>

#include "cordon/error.h"

namespace cordon::history::detail {

// The SQL of each migration, index 0 = to version 1. Kept verbatim forever: a file made
// by any earlier build is brought forward by replaying the ones after its version.
[[nodiscard]] const char* migration_sql(int to_version);

// Brings the database to kSchemaVersion; returns the version it has afterwards. A file
// of a newer schema than this build is refused (kUnavailable), never downgraded.
[[nodiscard]] Result<int> migrate(sqlite3* db, const char* path);

}  // namespace cordon::history::detail
