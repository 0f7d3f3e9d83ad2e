#include "schema.h"

#include <array>
#include <chrono>
#include <string>

#include "cordon/scope_exit.h"
#include "frontend/history.h"
#include "sqlite_db.h"

namespace cordon::history::detail {
namespace {

// As the store's busy timeout: how long to wait for another process's migration.
constexpr std::chrono::milliseconds kLockBound{5000};

constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 1: the runs table and the version table.
    R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version(version) VALUES (0);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  code TEXT NOT NULL,
  language TEXT NOT NULL,
  backend TEXT NOT NULL,
  timeout_ms INTEGER NOT NULL,
  limits_json TEXT NOT NULL,
  env_names_json TEXT NOT NULL,
  outcome TEXT NOT NULL,
  limit_kind TEXT,
  exit_code INTEGER NOT NULL,
  wall_ms INTEGER NOT NULL,
  stdout BLOB NOT NULL,
  stderr BLOB NOT NULL,
  result_json TEXT NOT NULL);
)sql",
    // 2: who made the run (cli, inspector); an index for the default newest-first list.
    R"sql(
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown';
CREATE INDEX runs_by_start ON runs(started_ms);
)sql",
    // 3: what a re-run needs besides the code: the input files (CBOR map name -> bytes,
    // NULL when none) and the artifact patterns.
    R"sql(
ALTER TABLE runs ADD COLUMN input_files_cbor BLOB;
ALTER TABLE runs ADD COLUMN artifact_globs_json TEXT NOT NULL DEFAULT '[]';
)sql",
    // 4: for runs of source "mcp", the client's name and version from initialize ('' for
    // the others and for older rows); an index for the History's filter by source.
    R"sql(
ALTER TABLE runs ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_source ON runs(source);
)sql",
    // 5: the environment a run ran in, as RunRecord::environment: its name ('host', a
    // stored one's, '' for an unregistered --rootfs) and digest; both '' when none was
    // recorded. Older rows take them from their Result's "environment" (result schema 5),
    // so a history made before this version can be filtered too. json_type() fails on text
    // that is not JSON, which would fail the whole migration: it is reached only through a
    // CASE on json_valid() (a CASE evaluates its branches lazily; SQLite promises no order
    // for AND). Only rows that have an environment are rewritten, since rewriting a row
    // rewrites its stored output too. An index for the filter.
    R"sql(
ALTER TABLE runs ADD COLUMN environment TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN environment_digest TEXT NOT NULL DEFAULT '';
UPDATE runs SET
  environment = CASE WHEN json_type(result_json, '$.environment.name') = 'text'
                     THEN json_extract(result_json, '$.environment.name') ELSE '' END,
  environment_digest = CASE WHEN json_type(result_json, '$.environment.digest') = 'text'
                            THEN json_extract(result_json, '$.environment.digest') ELSE '' END
WHERE CASE WHEN json_valid(result_json)
           THEN json_type(result_json, '$.environment') = 'object' ELSE 0 END;
CREATE INDEX runs_by_environment ON runs(environment);
)sql",
    // 6: a call in a session (issue #41), as RunRecord::session: the session's id ('' for a
    // one-shot run) and the call's index in it; an index for a session's calls in order.
    // Result schema 6 brought sessions, so no older row has one to copy.
    R"sql(
ALTER TABLE runs ADD COLUMN session TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN session_call INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_session ON runs(session, session_call);
)sql",
};

// 0 for a new file (no version table yet).
Result<int> current_version(sqlite3* db) {
  auto has_table = Statement::prepare(
      db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!has_table) return std::unexpected(has_table.error());
  const Result<bool> found = has_table->step();
  if (!found) return std::unexpected(found.error());
  if (!*found) return 0;
  auto version = Statement::prepare(db, "SELECT version FROM schema_version");
  if (!version) return std::unexpected(version.error());
  const Result<bool> row = version->step();
  if (!row) return std::unexpected(row.error());
  return *row ? static_cast<int>(version->column_int(0)) : 0;
}

}  // namespace

const char* migration_sql(int to_version) {
  if (to_version < 1 || to_version > kSchemaVersion) return nullptr;
  return kMigrations.at(static_cast<std::size_t>(to_version - 1));
}

Result<int> migrate(sqlite3* db, const char* path) {
  const std::string where = std::string("history database ") + path;
  // IMMEDIATE takes the write lock before reading the version, so a second process
  // waits (busy timeout) and then sees the migrated file instead of migrating it again.
  if (auto begun = exec_when_free(db, "BEGIN IMMEDIATE", where, kLockBound); !begun) {
    return std::unexpected(begun.error());
  }
  ScopeExit rollback([db] { (void)exec(db, "ROLLBACK", "rollback"); });

  const Result<int> found = current_version(db);
  if (!found) return std::unexpected(found.error());
  if (*found > kSchemaVersion) {
    return fail(ErrorCode::kUnavailable, where + " has schema version " + std::to_string(*found) +
                                             ", newer than this cordon's " +
                                             std::to_string(kSchemaVersion));
  }
  for (int version = *found + 1; version <= kSchemaVersion; ++version) {
    const std::string step = where + ": migration to schema version " + std::to_string(version);
    if (auto applied = exec(db, migration_sql(version), step); !applied) {
      return std::unexpected(applied.error());
    }
    auto stamp = Statement::prepare(db, "UPDATE schema_version SET version = ?");
    if (!stamp) return std::unexpected(stamp.error());
    stamp->bind(1, static_cast<std::int64_t>(version));
    if (auto stamped = stamp->run(); !stamped) return std::unexpected(stamped.error());
  }
  if (auto committed = exec(db, "COMMIT", where); !committed) {
    return std::unexpected(committed.error());
  }
  rollback.dismiss();
  return kSchemaVersion;
}

}  // namespace cordon::history::detail
