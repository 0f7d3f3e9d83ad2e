// History rows as any writer could have left them: the history file is shared by every
// process of the user (CLI, MCP server, inspector), so a row's columns may hold any type
// and any bytes. Each input is one or two rows of fuzzed column values, inserted with
// SQLite directly (each value typed by a byte: NULL, integer, real, text or blob) into a
// store created by HistoryStore, then read back the ways the front ends read: list() in
// every order, count(), sources(), environments(), get() and request_of() of each row,
// remove().
// Properties: nothing throws or crashes; an inserted row is found by get(); list() never
// returns more than its limit.
#include <sqlite3.h>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/history.h"
#include "fuzz_temp_dir.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
using cordon::fuzz::Reader;
using cordon::fuzz::require;

constexpr const char* kColumns =
    "id, started_ms, finished_ms, source, code, language, backend, timeout_ms, limits_json,"
    " env_names_json, outcome, limit_kind, exit_code, wall_ms, stdout, stderr, result_json,"
    " input_files_cbor, artifact_globs_json, client, environment, environment_digest";
constexpr int kColumnCount = 22;

struct Db {
  history::HistoryStore store;
  sqlite3* raw = nullptr;
};

Db& db() {
  static Db* d = [] {
    const auto path = fuzz::scratch_dir() / "rows.sqlite3";
    auto store = history::HistoryStore::open(path);
    require(store.has_value());
    auto* out = new Db{std::move(*store), nullptr};  // lives as long as the process
    require(sqlite3_open_v2(path.c_str(), &out->raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_busy_timeout(out->raw, 5000);
    return out;
  }();
  return *d;
}

// Binds column `index` (1-based) to a value whose type the next byte picks.
void bind_value(sqlite3_stmt* stmt, int index, Reader& in) {
  const std::uint8_t type = in.byte();
  switch (type % 5) {
    case 0:
      sqlite3_bind_null(stmt, index);
      break;
    case 1:
      sqlite3_bind_int64(stmt, index, static_cast<sqlite3_int64>(in.u64()));
      break;
    case 2:
      sqlite3_bind_double(stmt, index, std::bit_cast<double>(in.u64()));
      break;
    case 3: {
      const std::string text = in.field('\x1f');
      sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      break;
    }
    default: {
      const std::string blob = in.field('\x1f');
      sqlite3_bind_blob(stmt, index, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
      break;
    }
  }
}

// Inserts one fuzzed row; its id, or nothing when SQLite refused it (a NULL in a NOT
// NULL column, a non-integer id).
std::optional<std::int64_t> insert_row(Reader& in) {
  std::string sql = std::string("INSERT INTO runs(") + kColumns + ") VALUES (?";
  for (int i = 1; i < kColumnCount; ++i) sql += ",?";
  sql += ")";
  sqlite3_stmt* stmt = nullptr;
  require(sqlite3_prepare_v2(db().raw, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  for (int i = 1; i <= kColumnCount; ++i) bind_value(stmt, i, in);
  const int rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return std::nullopt;
  return sqlite3_last_insert_rowid(db().raw);
}

void read_back(const history::HistoryStore& store, Reader& in) {
  history::Query query;
  query.search = in.field('\x1f');
  query.limit = 1 + in.byte() % 8;
  query.offset = in.byte() % 4;
  query.environment = in.field('\x1f');
  for (const auto sort :
       {history::SortKey::kTime, history::SortKey::kBackend, history::SortKey::kOutcome,
        history::SortKey::kDuration, history::SortKey::kEnvironment}) {
    query.sort = sort;
    query.descending = !query.descending;
    const auto rows = store.list(query);
    if (rows) require(rows->size() <= static_cast<std::size_t>(query.limit));
  }
  (void)store.count(query);
  (void)store.sources();
  (void)store.environments();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in(std::string_view(reinterpret_cast<const char*>(data), size));
  Db& d = db();
  require(sqlite3_exec(d.raw, "DELETE FROM runs", nullptr, nullptr, nullptr) == SQLITE_OK);
  std::vector<std::int64_t> ids;
  for (int row = 0; row < 2 && !in.empty(); ++row) {
    if (const auto id = insert_row(in)) ids.push_back(*id);
  }
  read_back(d.store, in);
  for (const std::int64_t id : ids) {
    const Result<history::RunRecord> record = d.store.get(id);
    require(record.has_value());
    const RunRequest again = history::request_of(*record);
    (void)validate(again);
    (void)record->result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    require(d.store.remove(id).has_value());
  }
  return 0;
}
