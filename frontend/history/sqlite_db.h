// Thin RAII over SQLite's C API for the history store: a connection and a prepared
// statement that close themselves, and errors that carry SQLite's own message.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::history::detail {

struct DbClose {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, DbClose>;

// "what: SQLite's message". A file that is not a database (or is damaged) and a file that
// cannot be written are kUnavailable, so callers can tell them from a broken invariant.
[[nodiscard]] Error db_error(sqlite3* db, int rc, std::string_view what);

// Runs SQL without results (several statements allowed).
[[nodiscard]] Status exec(sqlite3* db, const char* sql, std::string_view what);

// exec() that retries while another connection holds the lock, up to `bound`. For the
// steps where SQLite reports SQLITE_BUSY at once instead of calling the busy handler
// (it does so when waiting could deadlock, e.g. two connections switching a new file to
// WAL at the same moment): backing off and starting the statement again resolves it.
[[nodiscard]] Status exec_when_free(sqlite3* db, const char* sql, std::string_view what,
                                    std::chrono::milliseconds bound);

class Statement {
 public:
  [[nodiscard]] static Result<Statement> prepare(sqlite3* db, std::string_view sql);

  // Binds are 1-based, as in SQLite.
  void bind(int index, std::int64_t value);
  void bind(int index, std::string_view text);
  void bind_blob(int index, std::string_view bytes);
  void bind(int index, std::nullopt_t);

  // True when a row is ready, false when done.
  [[nodiscard]] Result<bool> step();
  // Steps once and expects completion (INSERT, UPDATE, DELETE).
  [[nodiscard]] Status run();
  // Ready to run again, with every parameter unbound (NULL): a statement kept for reuse.
  void reset();

  // Columns are 0-based, as in SQLite.
  [[nodiscard]] std::int64_t column_int(int index) const;
  [[nodiscard]] bool column_null(int index) const;
  [[nodiscard]] std::string column_text(int index) const;
  [[nodiscard]] std::string column_blob(int index) const;

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  std::string sql_;  // for error messages
};

}  // namespace cordon::history::detail
