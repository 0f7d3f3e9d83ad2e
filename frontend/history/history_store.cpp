// The store: open + migrate, add, list/search/sort, get, remove.
#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cordon/scope_exit.h"
#include "cordon/unique_fd.h"
#include "frontend/history.h"
#include "schema.h"
#include "sqlite_db.h"

namespace cordon::history {

using detail::DbPtr;
using detail::Statement;
using nlohmann::json;

namespace {

// Writers in the other process (CLI vs app) hold the lock for one short INSERT; 5 s is
// far beyond that and still bounded, so a wedged peer surfaces as an error, not a hang.
constexpr int kBusyTimeoutMs = 5000;
// Frames (4 KiB pages) a commit may leave in the WAL before it is truncated: ~16 runs.
constexpr int kWalTruncateFrames = 32;

Outcome outcome_from(std::string_view text) {
  for (const Outcome outcome : kAllOutcomes) {
    if (to_string(outcome) == text) return outcome;
  }
  return Outcome::kSandboxError;  // a newer build's outcome: shown as the catch-all
}

std::optional<LimitKind> limit_from(const Statement& row, int column) {
  if (row.column_null(column)) return std::nullopt;
  const std::string text = row.column_text(column);
  for (const LimitKind limit : kAllLimitKinds) {
    if (to_string(limit) == text) return limit;
  }
  return std::nullopt;
}

Language language_from(const std::string& text) {
  const Result<Language> language = parse_language(text);
  return language ? *language : Language::kSh;
}

std::int64_t to_ms(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

// A stored time of any value (another process may have written the row): clamped to what
// a system_clock time point holds (nanoseconds in an int64, about +-292 years), since the
// conversion of milliseconds beyond it overflows (undefined behaviour;
// tests/fuzz/history_rows_fuzz.cpp).
std::chrono::system_clock::time_point from_ms(std::int64_t ms) {
  using Clock = std::chrono::system_clock;
  constexpr std::int64_t kMost =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration::max()).count();
  return Clock::time_point(std::chrono::milliseconds(std::clamp(ms, -kMost, kMost)));
}

json optional_json(const std::optional<std::uint64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json limits_json(const Limits& limits) {
  return json{{"memory_bytes", optional_json(limits.memory_bytes)},
              {"max_processes", optional_json(limits.max_processes)},
              {"cpu_ms", limits.cpu_time ? json(limits.cpu_time->count()) : json(nullptr)},
              {"output_bytes", limits.output_bytes},
              {"scratch_bytes", optional_json(limits.scratch_bytes)}};
}

std::optional<std::uint64_t> optional_u64(const json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_unsigned()) return std::nullopt;
  return found->get<std::uint64_t>();
}

Limits limits_from(const std::string& text) {
  Limits limits;
  const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return limits;
  limits.memory_bytes = optional_u64(object, "memory_bytes");
  limits.max_processes = optional_u64(object, "max_processes");
  if (const auto cpu = optional_u64(object, "cpu_ms")) {
    limits.cpu_time = std::chrono::milliseconds(*cpu);
  }
  limits.output_bytes = optional_u64(object, "output_bytes").value_or(kDefaultOutputBytes);
  limits.scratch_bytes = optional_u64(object, "scratch_bytes");
  return limits;
}

std::vector<std::string> names_from(const std::string& text) {
  std::vector<std::string> names;
  const json array = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) return names;
  for (const json& name : array) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

// Input files as CBOR: a map name -> binary, so any bytes round-trip exactly.
json input_files_json(const std::map<std::string, std::string>& files) {
  json out = json::object();
  for (const auto& [name, bytes] : files) {
    out[name] = json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  }
  return out;
}

std::map<std::string, std::string> input_files_from(const std::string& cbor) {
  std::map<std::string, std::string> files;
  if (cbor.empty()) return files;  // NULL: none, or a row from before schema 3
  const json map = json::from_cbor(cbor, /*strict=*/true, /*allow_exceptions=*/false);
  if (!map.is_object()) return files;
  for (const auto& [name, value] : map.items()) {
    if (!value.is_binary()) continue;
    const auto& bytes = value.get_binary();
    files[name] = std::string(bytes.begin(), bytes.end());
  }
  return files;
}

std::string first_line(std::string_view code) {
  // The first line with something on it: snippets often start with a blank line.
  while (!code.empty()) {
    const std::size_t end = code.find('\n');
    const std::string_view line = code.substr(0, end);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) return std::string(line);
    if (end == std::string_view::npos) break;
    code.remove_prefix(end + 1);
  }
  return {};
}

// Every column of a record but the id, in the order add() binds and get() reads them.
constexpr const char* kRecordColumns =
    "started_ms, finished_ms, source, code, language, backend, timeout_ms, limits_json,"
    " env_names_json, outcome, limit_kind, exit_code, wall_ms, stdout, stderr, result_json,"
    " input_files_cbor, artifact_globs_json, client, environment, environment_digest,"
    " session, session_call";

// An environment as its two columns: none is '' and '' (the host is named "host", and an
// unregistered --rootfs has a digest, so no recorded environment has both empty).
std::optional<EnvironmentRef> environment_from(std::string name, std::string digest) {
  if (name.empty() && digest.empty()) return std::nullopt;
  return EnvironmentRef{.name = std::move(name), .digest = std::move(digest)};
}

// A session's call as its two columns: none is '' and 0.
std::optional<SessionCallRef> session_from(std::string id, std::int64_t call) {
  if (id.empty()) return std::nullopt;
  return SessionCallRef{.id = std::move(id), .call = call};
}

// LIKE pattern for a substring, with the wildcards of the search text escaped.
std::string like_pattern(std::string_view search) {
  std::string pattern = "%";
  for (const char c : search) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  pattern += '%';
  return pattern;
}

// The WHERE clause of a search, a source filter and an environment filter; bind_search()
// binds ?1, ?2, ?5 and ?6. An unregistered --rootfs has no name, so the filter names it by
// its digest (environments() lists it so); a named one is matched by name alone, so every
// version of "sci" (each digest) is one entry.
constexpr std::string_view kSearchWhere =
    " WHERE (?1 = '' OR code LIKE ?2 ESCAPE '\\' OR backend LIKE ?2 ESCAPE '\\'"
    " OR outcome LIKE ?2 ESCAPE '\\' OR source LIKE ?2 ESCAPE '\\' OR client LIKE ?2 ESCAPE '\\'"
    " OR environment LIKE ?2 ESCAPE '\\' OR environment_digest LIKE ?2 ESCAPE '\\'"
    " OR CAST(stdout AS TEXT) LIKE ?2 ESCAPE '\\' OR CAST(stderr AS TEXT) LIKE ?2 ESCAPE '\\')"
    " AND (?5 = '' OR source = ?5)"
    " AND (?6 = '' OR environment = ?6 OR (environment = '' AND environment_digest = ?6))"
    " AND (?7 = '' OR session = ?7)";

void bind_search(Statement& statement, const Query& query) {
  statement.bind(1, std::string_view(query.search));
  statement.bind(2, std::string_view(like_pattern(query.search)));
  statement.bind(5, std::string_view(query.source));
  statement.bind(6, std::string_view(query.environment));
  statement.bind(7, std::string_view(query.session));
}

// The ORDER BY terms of a key, each to be followed by the direction.
std::vector<std::string_view> order_columns(SortKey key) {
  switch (key) {
    case SortKey::kTime:
      return {"started_ms"};
    case SortKey::kBackend:
      return {"backend COLLATE NOCASE"};
    case SortKey::kOutcome:
      return {"outcome"};
    case SortKey::kDuration:
      return {"wall_ms"};
    case SortKey::kEnvironment:
      // None ('', '') first, then unregistered ones ('', digest) by digest, then names.
      return {"environment COLLATE NOCASE", "environment_digest"};
  }
  return {"started_ms"};
}

// The first column of every row of `sql`, as text: what a filter offers.
Result<std::vector<std::string>> first_column(sqlite3* db, std::string_view sql) {
  auto select = Statement::prepare(db, sql);
  if (!select) return std::unexpected(select.error());
  std::vector<std::string> out;
  while (true) {
    const Result<bool> more = select->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    out.push_back(select->column_text(0));
  }
  return out;
}

}  // namespace

std::string code_preview(std::string_view code, std::size_t max_chars) {
  std::string out;
  while (!code.empty() && out.size() <= max_chars) {
    const std::size_t end = code.find('\n');
    std::string_view line = code.substr(0, end);
    const std::size_t start = line.find_first_not_of(" \t\r");
    if (start != std::string_view::npos) {
      line = line.substr(start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (!out.empty()) out += " \u23ce ";
      out += line;
    }
    if (end == std::string_view::npos) break;
    code.remove_prefix(end + 1);
  }
  if (out.size() <= max_chars) return out;
  std::size_t cut = max_chars;
  // Back to the start of a UTF-8 sequence (not a continuation byte 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
  out.resize(cut);
  return out + "\u2026";
}

struct HistoryStore::Impl {
  std::filesystem::path path;
  DbPtr db;
  int version = 0;
  // The INSERT, prepared at the first add and reset after each: a long-lived writer (`cordon
  // mcp`, the inspector) spent ~17% of its history CPU preparing it again per record
  // (2026-12-04). Declared after db: finalized before the connection closes.
  std::optional<Statement> insert;
};

HistoryStore::HistoryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HistoryStore::HistoryStore(HistoryStore&&) noexcept = default;
HistoryStore& HistoryStore::operator=(HistoryStore&&) noexcept = default;
HistoryStore::~HistoryStore() = default;

const std::filesystem::path& HistoryStore::path() const { return impl_->path; }
int HistoryStore::schema_version() const { return impl_->version; }

Result<HistoryStore> HistoryStore::open(const std::filesystem::path& path) {
  const std::string where = "history database " + path.string();
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return std::unexpected(
          Error{ErrorCode::kUnavailable, ec.value(), "create the directory of " + where});
    }
  }
  // The history holds code and its output, which may be private: a new file is made
  // 0600 before SQLite sees it (SQLite would use 0644 & ~umask), and SQLite gives its
  // -wal and -shm files the mode of the database file.
  const UniqueFd created(
      ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (const int err = errno; !created && err != EEXIST) {
    // kUnavailable like every other "cannot use this file" (sqlite_db.h), with the errno.
    return std::unexpected(Error{ErrorCode::kUnavailable, err, "create " + where});
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE,
      nullptr);
  impl->db.reset(raw);  // even a failed open returns a handle that must be closed
  if (rc != SQLITE_OK) return std::unexpected(detail::db_error(raw, rc, "open " + where));
  sqlite3* db = impl->db.get();
  // A file whose permissions forbid writing is opened read-only without an error; say so
  // now rather than at the first add().
  if (sqlite3_db_readonly(db, "main") == 1) {
    return fail(ErrorCode::kUnavailable, where + " is read-only");
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // No checkpoint when the last connection closes: every `cordon run` is a short-lived
  // last connection, and the checkpoint (two fdatasyncs) plus removing the -wal and -shm
  // files cost ~2 ms on ext4, more than the insert. The WAL is checkpointed instead
  // every few runs (see the WAL hook below).
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // WAL: readers never block the writer and the CLI and the app can both write (in turn,
  // waiting through the busy timeout). This is also the first real read of the file, so
  // a file that is not a database fails here.
  if (auto wal = detail::exec_when_free(db, "PRAGMA journal_mode=WAL", where,
                                        std::chrono::milliseconds(kBusyTimeoutMs));
      !wal) {
    return std::unexpected(wal.error());
  }
  // NORMAL is durable across application crashes in WAL mode; only a power loss can
  // drop the last runs, which is fine for a history.
  if (auto sync = detail::exec(db, "PRAGMA synchronous=NORMAL", where); !sync) {
    return std::unexpected(sync.error());
  }
  // A small WAL. The first connection to open the file (every `cordon run`) rebuilds the
  // WAL index by reading the whole WAL (~1 ms per MiB here), and it forgets what earlier
  // checkpoints copied, so SQLite never restarts a WAL written by one-commit processes:
  // it grew by ~8 KiB a run, and so did every later run's cost. Instead, once a commit
  // leaves kWalTruncateFrames or more, the committing connection checkpoints and truncates
  // the WAL itself, without waiting: if a reader (the inspector) holds it, a later run
  // does it.
  sqlite3_wal_hook(
      db,
      [](void*, sqlite3* handle, const char* name, int frames) {
        if (frames >= kWalTruncateFrames) {
          sqlite3_busy_timeout(handle, 0);
          (void)sqlite3_wal_checkpoint_v2(handle, name, SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                                          nullptr);
          sqlite3_busy_timeout(handle, kBusyTimeoutMs);
        }
        return SQLITE_OK;
      },
      nullptr);
  const Result<int> version = detail::migrate(db, path.c_str());
  if (!version) return std::unexpected(version.error());
  impl->version = *version;
  return HistoryStore(std::move(impl));
}

Result<std::int64_t> HistoryStore::add(const RunRecord& record) {
  if (!impl_->insert) {
    auto insert = Statement::prepare(
        impl_->db.get(), std::string("INSERT INTO runs(") + kRecordColumns +
                             ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!insert) return std::unexpected(insert.error());
    impl_->insert.emplace(std::move(*insert));
  }
  Statement& row = *impl_->insert;
  // Unbound and ready for the next add (its copies of this record's text freed) however
  // this one ends; a fresh statement needs no reset.
  const ScopeExit reset_after([&] { row.reset(); });
  row.bind(1, to_ms(record.started));
  row.bind(2, to_ms(record.finished));
  row.bind(3, std::string_view(record.source));
  row.bind(4, std::string_view(record.code));
  row.bind(5, to_string(record.language));
  row.bind(6, std::string_view(record.backend));
  row.bind(7, record.timeout_ms);
  row.bind(8, std::string_view(limits_json(record.limits).dump()));
  row.bind(9, std::string_view(
                  json(record.env_names).dump(-1, ' ', false, json::error_handler_t::replace)));
  row.bind(10, to_string(record.outcome));
  if (record.limit) {
    row.bind(11, to_string(*record.limit));
  } else {
    row.bind(11, std::nullopt);
  }
  row.bind(12, static_cast<std::int64_t>(record.exit_code));
  row.bind(13, record.wall_ms);
  row.bind_blob(14, record.stdout_data);
  row.bind_blob(15, record.stderr_data);
  // replace: the Result's strings are already valid UTF-8 (result_json.h); this only
  // guards a hand-made record from throwing.
  row.bind(16,
           std::string_view(record.result.dump(-1, ' ', false, json::error_handler_t::replace)));
  if (record.input_files.empty()) {
    row.bind(17, std::nullopt);
  } else {
    const std::vector<std::uint8_t> cbor = json::to_cbor(input_files_json(record.input_files));
    row.bind_blob(17, std::string_view(reinterpret_cast<const char*>(cbor.data()), cbor.size()));
  }
  row.bind(18,
           std::string_view(
               json(record.artifact_globs).dump(-1, ' ', false, json::error_handler_t::replace)));
  row.bind(19, std::string_view(record.client));
  row.bind(20, record.environment ? std::string_view(record.environment->name) : "");
  row.bind(21, record.environment ? std::string_view(record.environment->digest) : "");
  row.bind(22, record.session ? std::string_view(record.session->id) : "");
  row.bind(23, record.session ? record.session->call : std::int64_t{0});
  if (auto done = row.run(); !done) {
    Error error = done.error();
    error.message = "record into history database " + impl_->path.string() + ": " + error.message;
    return std::unexpected(std::move(error));
  }
  return sqlite3_last_insert_rowid(impl_->db.get());
}

Status HistoryStore::add_all(std::span<const RunRecord> records) {
  if (records.size() == 1) {
    auto added = add(records.front());
    if (!added) return std::unexpected(added.error());
    return {};
  }
  const std::string where = "history database " + impl_->path.string();
  // IMMEDIATE: the write lock is taken (waiting through the busy timeout) before the first
  // insert, not upgraded midway, where a busy database would fail the batch at once.
  if (auto begun = detail::exec(impl_->db.get(), "BEGIN IMMEDIATE", where); !begun) {
    return std::unexpected(begun.error());
  }
  for (const RunRecord& record : records) {
    if (auto added = add(record); !added) {
      (void)detail::exec(impl_->db.get(), "ROLLBACK", where);
      return std::unexpected(added.error());
    }
  }
  if (auto committed = detail::exec(impl_->db.get(), "COMMIT", where); !committed) {
    (void)detail::exec(impl_->db.get(), "ROLLBACK", where);
    return std::unexpected(committed.error());
  }
  return {};
}

Result<std::vector<RunSummary>> HistoryStore::list(const Query& query) const {
  std::string sql =
      "SELECT id, started_ms, source, backend, language, outcome, limit_kind, exit_code,"
      " wall_ms, substr(code, 1, 400), client, environment, environment_digest, session,"
      " session_call FROM runs";
  sql += kSearchWhere;
  sql += " ORDER BY ";
  if (!query.session.empty()) {
    sql += "session_call ASC, ";  // a session's calls in the order they were made
  } else {
    for (const std::string_view column : order_columns(query.sort)) {
      sql += column;
      sql += query.descending ? " DESC, " : " ASC, ";
    }
  }
  // Ties (same backend, outcome or environment) keep a stable, newest-first order.
  sql += "id DESC LIMIT ?3 OFFSET ?4";
  auto select = Statement::prepare(impl_->db.get(), sql);
  if (!select) return std::unexpected(select.error());
  bind_search(*select, query);
  select->bind(3, query.limit);
  select->bind(4, query.offset);
  std::vector<RunSummary> rows;
  while (true) {
    const Result<bool> more = select->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    const Statement& row = *select;
    RunSummary summary;
    summary.id = row.column_int(0);
    summary.started = from_ms(row.column_int(1));
    summary.source = row.column_text(2);
    summary.backend = row.column_text(3);
    summary.language = language_from(row.column_text(4));
    summary.outcome = outcome_from(row.column_text(5));
    summary.limit = limit_from(row, 6);
    summary.exit_code = static_cast<int>(row.column_int(7));
    summary.wall_ms = row.column_int(8);
    summary.first_line = first_line(row.column_text(9));
    summary.preview = code_preview(row.column_text(9));
    summary.client = row.column_text(10);
    summary.environment = environment_from(row.column_text(11), row.column_text(12));
    summary.session = session_from(row.column_text(13), row.column_int(14));
    rows.push_back(std::move(summary));
  }
  return rows;
}

Result<std::int64_t> HistoryStore::count(const Query& query) const {
  auto select = Statement::prepare(
      impl_->db.get(), std::string("SELECT count(*) FROM runs") + std::string(kSearchWhere));
  if (!select) return std::unexpected(select.error());
  bind_search(*select, query);
  const Result<bool> row = select->step();
  if (!row) return std::unexpected(row.error());
  return select->column_int(0);
}

Result<RunRecord> HistoryStore::get(std::int64_t id) const {
  auto select = Statement::prepare(
      impl_->db.get(), std::string("SELECT id, ") + kRecordColumns + " FROM runs WHERE id = ?");
  if (!select) return std::unexpected(select.error());
  select->bind(1, id);
  const Result<bool> found = select->step();
  if (!found) return std::unexpected(found.error());
  if (!*found) return fail(ErrorCode::kNotFound, "no run " + std::to_string(id) + " in history");
  const Statement& row = *select;
  RunRecord record;
  record.id = row.column_int(0);  // then kRecordColumns, in order
  record.started = from_ms(row.column_int(1));
  record.finished = from_ms(row.column_int(2));
  record.source = row.column_text(3);
  record.code = row.column_text(4);
  record.language = language_from(row.column_text(5));
  record.backend = row.column_text(6);
  record.timeout_ms = row.column_int(7);
  record.limits = limits_from(row.column_text(8));
  record.env_names = names_from(row.column_text(9));
  record.outcome = outcome_from(row.column_text(10));
  record.limit = limit_from(row, 11);
  record.exit_code = static_cast<int>(row.column_int(12));
  record.wall_ms = row.column_int(13);
  record.stdout_data = row.column_blob(14);
  record.stderr_data = row.column_blob(15);
  record.result = json::parse(row.column_text(16), nullptr, /*allow_exceptions=*/false);
  record.input_files = input_files_from(row.column_blob(17));
  record.artifact_globs = names_from(row.column_text(18));
  record.client = row.column_text(19);
  record.environment = environment_from(row.column_text(20), row.column_text(21));
  record.session = session_from(row.column_text(22), row.column_int(23));
  return record;
}

Result<std::vector<std::string>> HistoryStore::sources() const {
  return first_column(impl_->db.get(), "SELECT DISTINCT source FROM runs ORDER BY source");
}

Result<std::vector<std::string>> HistoryStore::environments() const {
  // What Query::environment matches: the name, or an unregistered one's digest.
  return first_column(
      impl_->db.get(),
      "SELECT DISTINCT CASE WHEN environment <> '' THEN environment ELSE environment_digest END"
      " AS shown FROM runs WHERE environment <> '' OR environment_digest <> '' ORDER BY shown");
}

Status HistoryStore::remove(std::int64_t id) {
  auto erase = Statement::prepare(impl_->db.get(), "DELETE FROM runs WHERE id = ?");
  if (!erase) return std::unexpected(erase.error());
  erase->bind(1, id);
  if (auto done = erase->run(); !done) return std::unexpected(done.error());
  if (sqlite3_changes(impl_->db.get()) == 0) {
    return fail(ErrorCode::kNotFound, "no run " + std::to_string(id) + " in history");
  }
  return {};
}

Result<std::int64_t> record_run(const std::filesystem::path& path, const RunRecord& record) {
  Result<HistoryStore> store = HistoryStore::open(path);
  if (!store) return std::unexpected(store.error());
  return store->add(record);
}

}  // namespace cordon::history
