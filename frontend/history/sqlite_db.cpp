#include "sqlite_db.h"

#include <thread>

namespace cordon::history::detail {

Error db_error(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {  // the primary code; extended codes keep it in the low byte
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Error{ErrorCode::kUnavailable, 0, message + " (corrupt or not a history database)"};
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // The errno of the failed syscall, when SQLite kept one, says why (EACCES, ENOSPC).
      return Error{ErrorCode::kUnavailable, db != nullptr ? sqlite3_system_errno(db) : 0, message};
    default:
      return Error{ErrorCode::kInternal, 0, message};
  }
}

Status exec(sqlite3* db, const char* sql, std::string_view what) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(db_error(db, rc, what));
  return {};
}

Status exec_when_free(sqlite3* db, const char* sql, std::string_view what,
                      std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (true) {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return {};
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(db_error(db, rc, what));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::unexpected(db_error(db, rc, "prepare " + std::string(sql.substr(0, 40))));
  }
  return Statement(db, stmt, std::string(sql));
}

void Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
}

void Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies, the view may die before step().
  sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void Statement::bind_blob(int index, std::string_view bytes) {
  // A zero-length blob with a null pointer would bind NULL; "" keeps it an empty blob.
  sqlite3_bind_blob64(stmt_.get(), index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                      SQLITE_TRANSIENT);
}

void Statement::bind(int index, std::nullopt_t /*unused*/) {
  sqlite3_bind_null(stmt_.get(), index);
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(db_error(db_, rc, "run " + sql_.substr(0, 40)));
}

Status Statement::run() {
  const Result<bool> row = step();
  if (!row) return std::unexpected(row.error());
  return {};
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::int64_t Statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_.get(), index);
}

bool Statement::column_null(int index) const {
  return sqlite3_column_type(stmt_.get(), index) == SQLITE_NULL;
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_.get(), index);
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

std::string Statement::column_blob(int index) const {
  const void* blob = sqlite3_column_blob(stmt_.get(), index);
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (blob == nullptr) return {};
  return {static_cast<const char*>(blob), static_cast<std::size_t>(size)};
}

}  // namespace cordon::history::detail
