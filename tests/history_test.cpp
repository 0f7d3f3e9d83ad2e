// The history store against real SQLite files: round trip of raw bytes and the Result,
// env values never written, migrations from an older file, two processes writing at once,
// corrupt and unwritable files, search, sort, paging, delete.
#include "frontend/history.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cordon/result_json.h"
#include "cordon/temp_dir.h"

namespace cordon::history {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::system_clock;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TempDir make_dir() {
  auto dir = TempDir::create("cordon-history-test-");
  EXPECT_TRUE(dir) << dir.error().describe();
  return std::move(*dir);
}

// A finished run as a backend would report it.
RunRecord sample(std::string code, std::string backend, Outcome outcome, std::int64_t wall_ms,
                 std::int64_t started_ms) {
  RunRequest request;
  request.code = std::move(code);
  request.language = Language::kPython;
  request.timeout = milliseconds(2500);
  request.limits.memory_bytes = 64u << 20;
  request.limits.max_processes = 16;
  RunResult result;
  result.outcome = outcome;
  result.exit_code = outcome == Outcome::kOk ? 0 : 1;
  result.wall_ms = wall_ms;
  result.backend = {std::move(backend), "1.0"};
  result.stdout_data = "out of " + request.code;
  const auto started = system_clock::time_point(milliseconds(started_ms));
  return make_record(request, result, started, started + milliseconds(wall_ms), "test");
}

TEST(HistoryStore, RoundTripKeepsRawBytesResultAndSettings) {
  const TempDir dir = make_dir();
  auto store = HistoryStore::open(dir.path() / "h.sqlite3");
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);

  RunRequest request;
  request.code = "printf '\\377\\000x'\necho done";
  request.language = Language::kSh;
  request.timeout = milliseconds(0);  // the default applies, and is what gets stored
  request.limits.memory_bytes = 128u << 20;
  request.limits.cpu_time = milliseconds(1500);
  request.limits.output_bytes = 4096;
  request.env = {{"FIRST", "1"}, {"SECOND", "2"}};
  request.input_files = {{"data.bin", std::string("\0\xff\x80z", 4)}, {"dir/a.txt", "a\n"}};
  request.artifact_globs = {"*.out", "out/*.csv"};
  RunResult result;
  result.outcome = Outcome::kLimitExceeded;
  result.limit = LimitKind::kMemory;
  result.exit_code = -1;
  result.signal = 9;
  result.wall_ms = 321;
  result.backend = {"namespace", "0.1.0"};
  result.stdout_data = std::string("\xff\0x", 3);  // invalid UTF-8 and a NUL: kept raw
  result.stderr_data = "err";
  result.stdout_truncated = true;
  const auto started = system_clock::time_point(milliseconds(1'700'000'000'123));
  const RunRecord record =
      make_record(request, result, started, started + milliseconds(400), "cli");

  const Result<std::int64_t> id = store->add(record);
  ASSERT_TRUE(id) << id.error().describe();
  const Result<RunRecord> back = store->get(*id);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->id, *id);
  EXPECT_EQ(back->started, started);
  EXPECT_EQ(back->finished, started + milliseconds(400));
  EXPECT_EQ(back->source, "cli");
  EXPECT_EQ(back->code, request.code);
  EXPECT_EQ(back->language, Language::kSh);
  EXPECT_EQ(back->backend, "namespace");
  EXPECT_EQ(back->timeout_ms, kDefaultTimeout.count());
  EXPECT_EQ(back->limits.memory_bytes, request.limits.memory_bytes);
  EXPECT_FALSE(back->limits.max_processes);
  EXPECT_EQ(back->limits.cpu_time, milliseconds(1500));
  EXPECT_EQ(back->limits.output_bytes, 4096u);
  EXPECT_EQ(back->env_names, (std::vector<std::string>{"FIRST", "SECOND"}));
  EXPECT_EQ(back->outcome, Outcome::kLimitExceeded);
  EXPECT_EQ(back->limit, LimitKind::kMemory);
  EXPECT_EQ(back->wall_ms, 321);
  EXPECT_EQ(back->stdout_data, std::string("\xff\0x", 3));
  EXPECT_EQ(back->stderr_data, "err");
  EXPECT_EQ(back->result, to_json(result));
  EXPECT_EQ(back->result.at("stdout_truncated"), true);
  EXPECT_EQ(back->input_files, request.input_files);  // binary bytes exact
  EXPECT_EQ(back->artifact_globs, request.artifact_globs);

  const RunRequest again = request_of(*back);
  EXPECT_EQ(again.code, request.code);
  EXPECT_EQ(again.input_files, request.input_files);
  EXPECT_EQ(again.artifact_globs, request.artifact_globs);
  EXPECT_EQ(again.timeout, kDefaultTimeout);
  EXPECT_EQ(again.limits.memory_bytes, request.limits.memory_bytes);
  EXPECT_TRUE(again.env.empty());
}

// A row written before result schema 2, with 0 for figures it had not measured, reads
// back as it was written, and its figures read as the inspector shows them.
TEST(HistoryStore, KeepsAndReadsAResultOfSchemaVersion1) {
  const TempDir dir = make_dir();
  auto store = HistoryStore::open(dir.path() / "h.sqlite3");
  ASSERT_TRUE(store) << store.error().describe();
  RunRecord record = sample("sleep 5", "namespace", Outcome::kTimedOut, 1008, 1000);
  // As the schema-1 build wrote it: to_json's fields, its version and zeros.
  record.result["schema_version"] = 1;
  record.result["timed_out"] = true;
  record.result["signal"] = 0;
  record.result["cpu_ms"] = 0;
  record.result["max_rss_kb"] = 0;
  record.result["memory_peak_kb"] = 752;
  const Result<std::int64_t> id = store->add(record);
  ASSERT_TRUE(id) << id.error().describe();
  const Result<RunRecord> back = store->get(*id);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->result, record.result);
  EXPECT_EQ(back->outcome, Outcome::kTimedOut);
  EXPECT_EQ(result_figure(back->result, "max_rss_kb"), std::nullopt);
  EXPECT_EQ(result_figure(back->result, "cpu_ms"), 0);
  EXPECT_EQ(result_figure(back->result, "memory_peak_kb"), 752);
}

// A list's preview of code is more than its first line (often only an import): every
// non-blank line, joined, cut on a UTF-8 boundary.
TEST(HistoryPreview, JoinsNonBlankLinesAndCutsOnACharacterBoundary) {
  EXPECT_EQ(history::code_preview("\n  import os\n\nprint(os.getcwd())\r\n"),
            "import os \u23ce print(os.getcwd())");
  EXPECT_EQ(history::code_preview(""), "");
  EXPECT_EQ(history::code_preview("abcdef", 3), "abc\u2026");
  // "é" is two bytes: a cut inside it backs up to before it.
  EXPECT_EQ(history::code_preview("a\xc3\xa9z", 2), "a\u2026");
}

TEST(HistoryStore, NewFilesArePrivate) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "private" / "h.sqlite3";
  const mode_t old_umask = ::umask(022);  // the usual one, which would give 0644
  auto store = HistoryStore::open(path);
  ::umask(old_umask);
  ASSERT_TRUE(store) << store.error().describe();
  ASSERT_TRUE(store->add(sample("echo x", "subprocess", Outcome::kOk, 1, 1)));
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st{};
    const std::string file = path.string() + suffix;
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << file;
  }
}

// Every `cordon run` is a new connection that adds one run and closes without a
// checkpoint; each open reads the whole WAL. The WAL must stay small however many runs
// were added (it grew by every run before the store truncated it itself), and every run
// must still be there.
TEST(HistoryStore, WalStaysSmallAcrossOneRunConnections) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "h.sqlite3";
  constexpr int kRuns = 120;
  std::uintmax_t largest = 0;
  for (int i = 0; i < kRuns; ++i) {
    auto store = HistoryStore::open(path);
    ASSERT_TRUE(store) << store.error().describe();
    ASSERT_TRUE(store->add(
        sample("print(" + std::to_string(i) + ")", "subprocess", Outcome::kOk, 1, 1000 + i)));
    std::error_code ec;
    largest = std::max(largest, fs::file_size(path.string() + "-wal", ec));
  }
  // 120 runs at ~8 KiB each would be ~1 MiB; the store truncates at 32 frames (128 KiB).
  EXPECT_LT(largest, 256u * 1024) << "the WAL grows with the number of runs";
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  Query all;
  all.limit = 1000;
  auto listed = store->list(all);
  ASSERT_TRUE(listed) << listed.error().describe();
  EXPECT_EQ(listed->size(), static_cast<std::size_t>(kRuns));
}

TEST(HistoryStore, EnvironmentValuesNeverReachTheFile) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "h.sqlite3";
  const std::string secret = "sk-cordon-test-9f8e7d6c5b4a";
  {
    auto store = HistoryStore::open(path);
    ASSERT_TRUE(store) << store.error().describe();
    RunRequest request;
    request.code = "echo hello";
    request.env = {{"API_KEY", secret}, {"OTHER_NAME", secret + "-2"}};
    RunResult result;
    result.outcome = Outcome::kOk;
    result.exit_code = 0;
    result.stdout_data = "hello\n";
    const auto now = system_clock::now();
    const auto id = store->add(make_record(request, result, now, now, "test"));
    ASSERT_TRUE(id) << id.error().describe();
    const auto back = store->get(*id);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->env_names, (std::vector<std::string>{"API_KEY", "OTHER_NAME"}));

    // While the store is open the rows sit in the WAL file: check every file of the db.
    bool saw_name = false;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      const std::string bytes = read_bytes(entry.path());
      EXPECT_EQ(bytes.find(secret), std::string::npos) << entry.path();
      saw_name = saw_name || bytes.find("OTHER_NAME") != std::string::npos;
    }
    EXPECT_TRUE(saw_name) << "the names are stored, so the search above looked at the rows";
  }
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(read_bytes(entry.path()).find(secret), std::string::npos) << entry.path();
  }
}

// A file written by the first schema, as an earlier build left it: the SQL is that
// build's, verbatim, so the test fails if migration 1 is ever edited in place.
// Runs `sql` on the file at `path`, as an older build would have.
void exec_sql(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_free(error);
  sqlite3_close(db);
}

void make_version1_file(const fs::path& path) {
  exec_sql(path, R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version(version) VALUES (1);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY, started_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL,
  code TEXT NOT NULL, language TEXT NOT NULL, backend TEXT NOT NULL,
  timeout_ms INTEGER NOT NULL, limits_json TEXT NOT NULL, env_names_json TEXT NOT NULL,
  outcome TEXT NOT NULL, limit_kind TEXT, exit_code INTEGER NOT NULL, wall_ms INTEGER NOT NULL,
  stdout BLOB NOT NULL, stderr BLOB NOT NULL, result_json TEXT NOT NULL);
INSERT INTO runs VALUES (7, 1000, 1200, 'echo old', 'sh', 'subprocess', 5000,
  '{"output_bytes":1048576}', '["OLD"]', 'failed', NULL, 3, 200, x'6f6c64', x'', '{"outcome":"failed"}');
)sql");
}

// Several records in one transaction (a long-lived writer's backlog): all stored, in order;
// a batch the database refuses part of stores none of it, and the store's kept INSERT
// still works after the failure.
TEST(HistoryStore, AddAllStoresABatchWholeOrNotAtAll) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "h.sqlite3";
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  const std::vector<RunRecord> batch = {sample("first", "namespace", Outcome::kOk, 1, 1000),
                                        sample("second", "namespace", Outcome::kOk, 1, 2000),
                                        sample("third", "namespace", Outcome::kOk, 1, 3000)};
  ASSERT_TRUE(store->add_all(batch));
  Query all;
  all.limit = 100;
  all.sort = SortKey::kTime;
  all.descending = false;
  auto listed = store->list(all);
  ASSERT_TRUE(listed) << listed.error().describe();
  ASSERT_EQ(listed->size(), 3u);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto got = store->get((*listed)[i].id);
    ASSERT_TRUE(got) << got.error().describe();
    EXPECT_EQ(got->code, batch[i].code);
    EXPECT_EQ(got->stdout_data, batch[i].stdout_data);
  }

  // Another connection makes the database refuse one record of the next batch.
  exec_sql(path,
           "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.code = 'refused' "
           "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;");
  const std::vector<RunRecord> refused = {sample("fourth", "namespace", Outcome::kOk, 1, 4000),
                                          sample("refused", "namespace", Outcome::kOk, 1, 5000),
                                          sample("sixth", "namespace", Outcome::kOk, 1, 6000)};
  const Status failed = store->add_all(refused);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().describe().find("refused by the test"), std::string::npos)
      << failed.error().describe();
  EXPECT_EQ(store->count(all).value_or(-1), 3) << "a refused batch stored part of itself";

  // The same connection and its kept INSERT go on working.
  ASSERT_TRUE(store->add(sample("seventh", "namespace", Outcome::kOk, 1, 7000)));
  ASSERT_TRUE(
      store->add_all(std::vector<RunRecord>{sample("eighth", "namespace", Outcome::kOk, 1, 8000),
                                            sample("ninth", "namespace", Outcome::kOk, 1, 9000)}));
  EXPECT_EQ(store->count(all).value_or(-1), 6);
}

TEST(HistoryStore, MigratesAVersion1File) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "old.sqlite3";
  make_version1_file(path);
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);

  const auto old = store->get(7);
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_EQ(old->code, "echo old");
  EXPECT_EQ(old->source, "unknown");  // the column version 2 added, with its default
  EXPECT_EQ(old->outcome, Outcome::kFailed);
  EXPECT_EQ(old->exit_code, 3);
  EXPECT_EQ(old->stdout_data, "old");
  EXPECT_EQ(old->env_names, std::vector<std::string>{"OLD"});

  // New rows go in beside the old one, and a second open finds nothing to migrate.
  ASSERT_TRUE(store->add(sample("print(1)", "namespace", Outcome::kOk, 10, 2000)));
  auto again = HistoryStore::open(path);
  ASSERT_TRUE(again) << again.error().describe();
  const auto rows = again->list({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->back().id, 7);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*), max(version) FROM schema_version", -1, &stmt,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  EXPECT_EQ(sqlite3_column_int(stmt, 1), kSchemaVersion);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// A file as the schema-2 build left it (migration 2's SQL verbatim over version 1's).
void make_version2_file(const fs::path& path) {
  make_version1_file(path);
  exec_sql(path, R"sql(
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown';
CREATE INDEX runs_by_start ON runs(started_ms);
UPDATE runs SET source = 'cli';
UPDATE schema_version SET version = 2;
)sql");
}

TEST(HistoryStore, MigratesAVersion2File) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "v2.sqlite3";
  make_version2_file(path);
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  const auto old = store->get(7);
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_EQ(old->source, "cli");
  EXPECT_EQ(old->code, "echo old");
  EXPECT_TRUE(old->input_files.empty());  // the columns version 3 added, empty
  EXPECT_TRUE(old->artifact_globs.empty());
  EXPECT_TRUE(request_of(*old).input_files.empty());

  // A new row keeps what version 3 adds, beside the old one.
  RunRecord record = sample("cat in.txt", "subprocess", Outcome::kOk, 10, 2000);
  record.input_files = {{"in.txt", "3\n4\n"}};
  record.artifact_globs = {"*.out"};
  const Result<std::int64_t> id = store->add(record);
  ASSERT_TRUE(id) << id.error().describe();
  const auto back = store->get(*id);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->input_files, record.input_files);
  EXPECT_EQ(back->artifact_globs, record.artifact_globs);
}

// A file as the schema-3 build left it (migration 3's SQL verbatim over version 2's).
void make_version3_file(const fs::path& path) {
  make_version2_file(path);
  exec_sql(path, R"sql(
ALTER TABLE runs ADD COLUMN input_files_cbor BLOB;
ALTER TABLE runs ADD COLUMN artifact_globs_json TEXT NOT NULL DEFAULT '[]';
UPDATE runs SET artifact_globs_json = '["*.csv"]';
UPDATE schema_version SET version = 3;
)sql");
}

TEST(HistoryStore, MigratesAVersion3FileKeepingItsRows) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "v3.sqlite3";
  make_version3_file(path);
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  const auto old = store->get(7);
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_EQ(old->source, "cli");
  EXPECT_EQ(old->code, "echo old");
  EXPECT_EQ(old->stdout_data, "old");
  EXPECT_EQ(old->artifact_globs, std::vector<std::string>{"*.csv"});
  EXPECT_EQ(old->client, "");  // the column version 4 added, empty
  const auto rows = store->list({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().client, "");

  // A new row keeps its client, beside the old one.
  RunRecord record = sample("print(1)", "namespace", Outcome::kOk, 10, 2000);
  record.source = "mcp";
  record.client = "claude-code 1.0";
  ASSERT_TRUE(store->add(record));
  Query mcp;
  mcp.source = "mcp";
  const auto mcp_rows = store->list(mcp);
  ASSERT_TRUE(mcp_rows);
  ASSERT_EQ(mcp_rows->size(), 1u);
  EXPECT_EQ(mcp_rows->front().client, "claude-code 1.0");
}

// A file as the schema-4 build left it (migration 4's SQL verbatim over version 3's), with
// runs whose Results (result schema 5) name an environment of each kind, one without one,
// and one whose Result is not JSON at all.
void make_version4_file(const fs::path& path) {
  make_version3_file(path);
  exec_sql(path, R"sql(
ALTER TABLE runs ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_source ON runs(source);
UPDATE schema_version SET version = 4;
INSERT INTO runs(id, started_ms, finished_ms, code, language, backend, timeout_ms, limits_json,
  env_names_json, outcome, limit_kind, exit_code, wall_ms, stdout, stderr, result_json, source)
VALUES
  (8, 2000, 2100, 'import numpy', 'python', 'namespace', 5000, '{}', '[]', 'ok', NULL, 0, 100,
   x'', x'', '{"outcome":"ok","environment":{"name":"sci","digest":"sha256:5c1"}}', 'cli'),
  (9, 3000, 3100, 'ls /', 'sh', 'namespace', 5000, '{}', '[]', 'ok', NULL, 0, 100,
   x'', x'', '{"outcome":"ok","environment":{"name":"","digest":"sha256:0ff"}}', 'cli'),
  (10, 4000, 4100, 'true', 'sh', 'subprocess', 5000, '{}', '[]', 'ok', NULL, 0, 100,
   x'', x'', '{"outcome":"ok","environment":{"name":"host","digest":""}}', 'mcp'),
  (11, 5000, 5100, 'false', 'sh', 'subprocess', 5000, '{}', '[]', 'failed', NULL, 1, 100,
   x'', x'', '{"outcome":"failed","environment":', 'cli');
)sql");
}

TEST(HistoryStore, MigratesAVersion4FileTakingTheEnvironmentFromItsResults) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "v4.sqlite3";
  make_version4_file(path);
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  EXPECT_EQ(store->count({}).value_or(-1), 5);  // every row kept, the broken one too

  auto environment_of = [&](std::int64_t id) -> std::optional<EnvironmentRef> {
    const Result<RunRecord> record = store->get(id);
    EXPECT_TRUE(record) << id << ": " << record.error().describe();
    return record ? record->environment : std::nullopt;
  };
  EXPECT_EQ(environment_of(7), std::nullopt);  // a Result without one
  EXPECT_EQ(environment_of(8), (EnvironmentRef{.name = "sci", .digest = "sha256:5c1"}));
  EXPECT_EQ(environment_of(9), (EnvironmentRef{.name = "", .digest = "sha256:0ff"}));
  EXPECT_EQ(environment_of(10), (EnvironmentRef{.name = "host", .digest = ""}));
  EXPECT_EQ(environment_of(11), std::nullopt);  // a Result that is not JSON
  const auto old = store->get(8);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->code, "import numpy");
  EXPECT_EQ(old->source, "cli");

  // The backfilled columns filter and are listed like a new row's.
  Query query;
  query.environment = "sci";
  const auto sci = store->list(query);
  ASSERT_TRUE(sci);
  ASSERT_EQ(sci->size(), 1u);
  EXPECT_EQ(sci->front().id, 8);
  EXPECT_EQ(sci->front().environment, (EnvironmentRef{.name = "sci", .digest = "sha256:5c1"}));
  EXPECT_EQ(store->environments().value_or(std::vector<std::string>{}),
            (std::vector<std::string>{"host", "sci", "sha256:0ff"}));

  // The filter has its index.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                               " AND name = 'runs_by_environment'",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// Each kind of environment comes back as it was recorded, and a re-run asks for it.
TEST(HistoryStore, RoundTripKeepsTheEnvironmentOfEachKind) {
  const TempDir dir = make_dir();
  auto store = HistoryStore::open(dir.path() / "env.sqlite3");
  ASSERT_TRUE(store) << store.error().describe();
  const std::string digest = "sha256:" + std::string(64, 'e');
  const std::optional<EnvironmentRef> kinds[] = {
      EnvironmentRef{.name = "host", .digest = ""}, EnvironmentRef{.name = "sci", .digest = digest},
      EnvironmentRef{.name = "", .digest = digest},  // an unregistered --rootfs
      std::nullopt,                                  // none recorded (engine mode)
  };
  for (const std::optional<EnvironmentRef>& kind : kinds) {
    const std::string label = kind ? "'" + kind->name + "'" : "none";
    RunRecord record = sample("echo env", "namespace", Outcome::kOk, 5, 1000);
    record.environment = kind;
    const Result<std::int64_t> id = store->add(record);
    ASSERT_TRUE(id) << label << ": " << id.error().describe();
    const Result<RunRecord> back = store->get(*id);
    ASSERT_TRUE(back) << label << ": " << back.error().describe();
    EXPECT_EQ(back->environment, kind) << label;
    EXPECT_EQ(request_of(*back).environment, kind) << label;
    Query query;
    query.limit = 1;
    const auto rows = store->list(query);
    ASSERT_TRUE(rows && rows->size() == 1u) << label;
    EXPECT_EQ(rows->front().id, *id) << label;
    EXPECT_EQ(rows->front().environment, kind) << label;
  }
}

// make_record takes the Result's environment (what the run reports), else the request's.
TEST(HistoryRecord, TakesTheEnvironmentFromTheResultElseTheRequest) {
  RunRequest request;
  request.code = "true";
  request.environment = EnvironmentRef{.name = "asked", .digest = "sha256:01"};
  RunResult result;
  result.backend = {"namespace", "1"};
  result.environment = EnvironmentRef{.name = "ran", .digest = "sha256:02"};
  const auto now = system_clock::now();
  EXPECT_EQ(make_record(request, result, now, now, "test").environment, result.environment);
  result.environment.reset();
  EXPECT_EQ(make_record(request, result, now, now, "test").environment, request.environment);
  request.environment.reset();
  EXPECT_EQ(make_record(request, result, now, now, "test").environment, std::nullopt);
}

// A variant's runs (issue #18) are recorded under its label, so the History lists and
// filters "container (runsc)" apart from the plain container backend.
TEST(HistoryRecord, RecordsAVariantUnderItsLabel) {
  RunRequest request;
  request.code = "true";
  RunResult result;
  result.backend = {.name = "container", .version = "1", .variant = "runsc"};
  const auto now = system_clock::now();
  EXPECT_EQ(make_record(request, result, now, now, "test").backend, "container (runsc)");
  result.backend.variant.clear();
  EXPECT_EQ(make_record(request, result, now, now, "test").backend, "container");
}

TEST(HistoryStore, RoundTripOfAnMcpRunKeepsSourceAndClient) {
  const TempDir dir = make_dir();
  auto store = HistoryStore::open(dir.path() / "mcp.sqlite3");
  ASSERT_TRUE(store) << store.error().describe();
  RunRecord record = sample("print('hi')", "namespace", Outcome::kOk, 12, 1000);
  record.source = "mcp";
  record.client = "claude-code 1.0";
  const Result<std::int64_t> id = store->add(record);
  ASSERT_TRUE(id) << id.error().describe();
  const auto back = store->get(*id);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->source, "mcp");
  EXPECT_EQ(back->client, "claude-code 1.0");
  const auto rows = store->list({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().source, "mcp");
  EXPECT_EQ(rows->front().client, "claude-code 1.0");
  // The client is searchable like the source.
  Query query;
  query.search = "CLAUDE-code";
  EXPECT_EQ(store->count(query).value_or(-1), 1);
}

TEST(HistoryStore, RefusesANewerSchema) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "new.sqlite3";
  ASSERT_TRUE(HistoryStore::open(path));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto store = HistoryStore::open(path);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
}

// Seen while writing history_rows_fuzz (its seed time_extremes): a row's started_ms / finished_ms
// beyond what a system_clock time point holds (another process may have written it) overflowed the
// conversion to nanoseconds (undefined behaviour). Such times are clamped, never wrapped.
TEST(HistoryStore, ExtremeTimesInARowAreClamped) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "times.sqlite3";
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  RunRecord record;
  record.code = "true";
  record.result = nlohmann::json::object();
  const auto id = store->add(record);
  ASSERT_TRUE(id) << id.error().describe();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE runs SET started_ms = 9223372036854775807,"
                         " finished_ms = -9223372036854775808",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto back = store->get(*id);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->started,
            std::chrono::system_clock::time_point(std::chrono::floor<std::chrono::milliseconds>(
                std::chrono::system_clock::duration::max())));
  EXPECT_LT(back->finished, std::chrono::system_clock::time_point());
  const auto rows = store->list(Query{});
  ASSERT_TRUE(rows) << rows.error().describe();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().started, back->started);
}

TEST(HistoryStore, CorruptFileIsAClearError) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "corrupt.sqlite3";
  write_bytes(path, std::string(8192, 'x'));
  const auto store = HistoryStore::open(path);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kUnavailable);
  const std::string message = store.error().describe();
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("not a history database"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), std::string(8192, 'x')) << "a foreign file is never rewritten";

  // record_run (what the CLI calls) reports the same instead of throwing or crashing.
  const auto recorded = record_run(path, sample("x", "subprocess", Outcome::kOk, 1, 1));
  ASSERT_FALSE(recorded);
  EXPECT_NE(recorded.error().describe().find(path.string()), std::string::npos);
}

TEST(HistoryStore, UnwritablePlaceIsAClearError) {
  const TempDir dir = make_dir();
  // A parent that is a file: nothing can be created below it, even as root.
  write_bytes(dir.path() / "file", "x");
  const auto below_file = HistoryStore::open(dir.path() / "file" / "sub" / "h.sqlite3");
  ASSERT_FALSE(below_file);
  EXPECT_NE(below_file.error().describe().find("file/sub"), std::string::npos)
      << below_file.error().describe();

  // A directory the caller may not write to. Root writes anywhere, so as root the opening
  // is done by a child that dropped to nobody.
  const fs::path locked = dir.path() / "locked";
  fs::create_directory(locked);
  ::chmod(locked.c_str(), 0555);
  ::chmod(dir.path().c_str(), 0755);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const auto store = HistoryStore::open(locked / "h.sqlite3");
    if (store) ::_exit(1);
    const bool names_path = store.error().describe().find("locked") != std::string::npos;
    ::_exit(names_path && store.error().code == ErrorCode::kUnavailable ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: opened anyway, 2: unclear error, 3: setuid failed";

  // An existing file without write permission is refused at open, not at the first add.
  const fs::path readonly = dir.path() / "ro.sqlite3";
  ASSERT_TRUE(HistoryStore::open(readonly));
  ::chmod(readonly.c_str(), 0444);
  const pid_t reader = ::fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const auto store = HistoryStore::open(readonly);
    ::_exit(store ? 1 : 0);
  }
  ASSERT_EQ(::waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(HistoryStore, TwoProcessesWriteAtOnce) {
  const TempDir dir = make_dir();
  const fs::path path = dir.path() / "shared.sqlite3";
  constexpr int kPerWriter = 60;
  // Both children open the not-yet-existing file at the same moment (a pipe releases
  // them), so creation and migration race too.
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> writers;
  for (int writer = 0; writer < 2; ++writer) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char go = 0;
      if (::read(gate[0], &go, 1) != 0) ::_exit(4);  // EOF when the parent closes it
      auto store = HistoryStore::open(path);
      if (!store) {
        std::fprintf(stderr, "writer %d: %s\n", writer, store.error().describe().c_str());
        ::_exit(1);
      }
      for (int i = 0; i < kPerWriter; ++i) {
        const std::string code = "echo writer" + std::to_string(writer) + "-" + std::to_string(i);
        if (!store->add(sample(code, "subprocess", Outcome::kOk, i, i))) ::_exit(2);
      }
      ::_exit(0);
    }
    writers.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (const pid_t pid : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: open failed, 2: add failed";
  }
  auto store = HistoryStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  const auto total = store->count({});
  ASSERT_TRUE(total);
  EXPECT_EQ(*total, 2 * kPerWriter);
  for (const char* writer : {"writer0-", "writer1-"}) {
    Query query;
    query.search = writer;
    EXPECT_EQ(store->count(query).value_or(-1), kPerWriter) << writer;
  }
}

class HistoryQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = HistoryStore::open(dir_.path() / "q.sqlite3");
    ASSERT_TRUE(opened) << opened.error().describe();
    store_.emplace(std::move(*opened));
    // code, backend, outcome, wall, start: each key orders them differently.
    ids_.push_back(
        *store_->add(sample("\n\nprint('alpha')\nmore", "subprocess", Outcome::kOk, 300, 1000)));
    ids_.push_back(
        *store_->add(sample("echo 50%_done", "namespace", Outcome::kTimedOut, 5000, 3000)));
    ids_.push_back(*store_->add(sample("echo needle", "Container", Outcome::kFailed, 20, 2000)));
  }

  std::vector<std::int64_t> order(const Query& query) {
    std::vector<std::int64_t> out;
    const auto rows = store_->list(query);
    EXPECT_TRUE(rows) << rows.error().describe();
    for (const auto& row : *rows) out.push_back(row.id);
    return out;
  }

  TempDir dir_ = make_dir();
  std::optional<HistoryStore> store_;
  std::vector<std::int64_t> ids_;
};

TEST_F(HistoryQuery, SortsByEachKey) {
  const auto a = ids_[0], b = ids_[1], c = ids_[2];
  Query query;
  EXPECT_EQ(order(query), (std::vector{b, c, a}));  // newest first by default
  query.descending = false;
  EXPECT_EQ(order(query), (std::vector{a, c, b}));
  query.sort = SortKey::kDuration;
  EXPECT_EQ(order(query), (std::vector{c, a, b}));
  query.sort = SortKey::kBackend;  // case-insensitive: Container, namespace, subprocess
  EXPECT_EQ(order(query), (std::vector{c, b, a}));
  query.sort = SortKey::kOutcome;  // failed, ok, timed_out
  EXPECT_EQ(order(query), (std::vector{c, a, b}));
  query.descending = true;
  EXPECT_EQ(order(query), (std::vector{b, a, c}));
}

TEST_F(HistoryQuery, SearchesCodeBackendOutcomeAndOutput) {
  Query query;
  query.search = "NEEDLE";  // case-insensitive
  EXPECT_EQ(order(query), std::vector{ids_[2]});
  query.search = "timed_out";
  EXPECT_EQ(order(query), std::vector{ids_[1]});
  query.search = "namespace";
  EXPECT_EQ(order(query), std::vector{ids_[1]});
  query.search = "out of echo n";  // only in the third's stdout
  EXPECT_EQ(order(query), std::vector{ids_[2]});
  query.search = "0%_";  // wildcards are literal
  EXPECT_EQ(order(query), std::vector{ids_[1]});
  query.search = "%";
  EXPECT_EQ(order(query), std::vector{ids_[1]});
  query.search = "nothing like this";
  EXPECT_TRUE(order(query).empty());
  EXPECT_EQ(store_->count(query).value_or(-1), 0);
}

TEST_F(HistoryQuery, FiltersBySourceExactlyAndListsTheSources) {
  EXPECT_EQ(store_->sources().value_or(std::vector<std::string>{}),
            std::vector<std::string>{"test"});
  RunRecord mcp = sample("echo needle from mcp", "namespace", Outcome::kOk, 5, 4000);
  mcp.source = "mcp";
  mcp.client = "cursor 0.4";
  const std::int64_t mcp_id = *store_->add(mcp);
  RunRecord cli = sample("echo needle from cli", "namespace", Outcome::kOk, 5, 5000);
  cli.source = "cli";
  const std::int64_t cli_id = *store_->add(cli);
  EXPECT_EQ(store_->sources().value_or(std::vector<std::string>{}),
            (std::vector<std::string>{"cli", "mcp", "test"}));

  Query query;
  query.source = "mcp";
  EXPECT_EQ(order(query), std::vector{mcp_id});
  EXPECT_EQ(store_->count(query).value_or(-1), 1);
  query.source = "cli";
  EXPECT_EQ(order(query), std::vector{cli_id});
  query.source = "mc";  // exact, not a substring
  EXPECT_TRUE(order(query).empty());
  // With a search: both must hold.
  query.source = "test";
  query.search = "needle";
  EXPECT_EQ(order(query), std::vector{ids_[2]});
  EXPECT_EQ(store_->count(query).value_or(-1), 1);
  query.source.clear();
  EXPECT_EQ(order(query), (std::vector{cli_id, mcp_id, ids_[2]}));
}

// The environment filter: a name exactly (every digest of it), an unregistered --rootfs by
// its digest exactly; the search finds a name or a digest; environments() offers both.
TEST_F(HistoryQuery, FiltersByEnvironmentNameOrDigestAndListsThem) {
  EXPECT_TRUE(store_->environments().value_or(std::vector<std::string>{"?"}).empty());
  const std::string old_sci = "sha256:" + std::string(64, 'a');
  const std::string new_sci = "sha256:" + std::string(64, 'b');
  const std::string rootfs = "sha256:" + std::string(64, 'c');
  auto add = [&](const std::string& code, std::optional<EnvironmentRef> environment,
                 std::int64_t started_ms) {
    RunRecord record = sample(code, "namespace", Outcome::kOk, 5, started_ms);
    record.environment = std::move(environment);
    return *store_->add(record);
  };
  const std::int64_t sci1 = add("echo sci one", EnvironmentRef{"sci", old_sci}, 4000);
  const std::int64_t sci2 = add("echo sci two", EnvironmentRef{"sci", new_sci}, 5000);
  const std::int64_t host = add("echo host", EnvironmentRef{"host", ""}, 6000);
  const std::int64_t bare = add("echo rootfs", EnvironmentRef{"", rootfs}, 7000);
  EXPECT_EQ(store_->environments().value_or(std::vector<std::string>{}),
            (std::vector<std::string>{"host", "sci", rootfs}));

  Query query;
  query.environment = "sci";
  EXPECT_EQ(order(query), (std::vector{sci2, sci1}));
  EXPECT_EQ(store_->count(query).value_or(-1), 2);
  query.environment = "host";
  EXPECT_EQ(order(query), std::vector{host});
  query.environment = rootfs;
  EXPECT_EQ(order(query), std::vector{bare});
  query.environment = old_sci;  // a named one is filtered by its name, not its digest
  EXPECT_TRUE(order(query).empty());
  query.environment = "sc";  // exact, not a substring
  EXPECT_TRUE(order(query).empty());
  query.environment = "sci";  // with a search: both must hold
  query.search = "two";
  EXPECT_EQ(order(query), std::vector{sci2});
  query.environment.clear();  // any environment, none included
  query.search.clear();
  EXPECT_EQ(store_->count(query).value_or(-1), 7);
}

TEST_F(HistoryQuery, SearchesTheEnvironmentNameAndDigest) {
  RunRecord sci = sample("print(1)", "namespace", Outcome::kOk, 5, 4000);
  sci.environment =
      EnvironmentRef{.name = "scipy-stack", .digest = "sha256:" + std::string(64, 'd')};
  const std::int64_t sci_id = *store_->add(sci);
  RunRecord bare = sample("print(2)", "namespace", Outcome::kOk, 5, 5000);
  bare.environment = EnvironmentRef{.name = "", .digest = "sha256:" + std::string(64, 'f')};
  const std::int64_t bare_id = *store_->add(bare);
  Query query;
  query.search = "SCIPY";  // case-insensitive, like every other field
  EXPECT_EQ(order(query), std::vector{sci_id});
  query.search = "ffffffff";
  EXPECT_EQ(order(query), std::vector{bare_id});
  query.search = "sha256:";
  EXPECT_EQ(order(query), (std::vector{bare_id, sci_id}));
}

TEST_F(HistoryQuery, SortsByEnvironment) {
  auto add = [&](std::optional<EnvironmentRef> environment, std::int64_t started_ms) {
    RunRecord record = sample("true", "namespace", Outcome::kOk, 5, started_ms);
    record.environment = std::move(environment);
    return *store_->add(record);
  };
  const std::int64_t zeta = add(EnvironmentRef{"zeta", "sha256:1"}, 4000);
  const std::int64_t alpha = add(EnvironmentRef{"Alpha", "sha256:2"}, 5000);
  const std::int64_t bare = add(EnvironmentRef{"", "sha256:3"}, 6000);
  Query query;
  query.sort = SortKey::kEnvironment;
  query.descending = false;
  // None first (the fixture's three, the last stored first among equals), then the
  // unregistered one, then names without regard to case.
  EXPECT_EQ(order(query), (std::vector{ids_[2], ids_[1], ids_[0], bare, alpha, zeta}));
  query.descending = true;
  EXPECT_EQ(order(query), (std::vector{zeta, alpha, bare, ids_[2], ids_[1], ids_[0]}));
}

// A session's calls (issue #41): each records its session and index (from the Result, by
// make_record), and a query by session lists them in call order whatever the sort asks.
TEST_F(HistoryQuery, ListsASessionsCallsInOrder) {
  const std::string id(32, 'c');
  std::vector<std::int64_t> calls;
  for (std::int64_t call : {2, 1, 3}) {  // stored out of order, and with later start times
    RunRecord record =
        sample("x = " + std::to_string(call), "namespace", Outcome::kOk, 10, 5000 - call * 100);
    ASSERT_FALSE(record.session);  // a one-shot Result has none
    RunResult result;
    result.session = SessionCallRef{.id = id, .call = call};
    record.session = make_record({}, result, {}, {}, "cli").session;
    calls.push_back(*store_->add(record));
  }
  Query query;
  query.session = id;
  query.sort = SortKey::kDuration;  // not read for a session
  EXPECT_EQ(order(query), (std::vector{calls[1], calls[0], calls[2]}));
  const auto rows = store_->list(query);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->front().session, (SessionCallRef{.id = id, .call = 1}));
  const auto got = store_->get(calls[2]);
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(got->session, (SessionCallRef{.id = id, .call = 3}));
  EXPECT_FALSE(store_->get(ids_[0])->session);  // a one-shot run's row
  EXPECT_EQ(store_->count(query).value_or(-1), 3);
  query.session = std::string(32, 'd');
  EXPECT_TRUE(order(query).empty());
}

TEST_F(HistoryQuery, PagesAndSummarises) {
  Query query;
  query.limit = 2;
  EXPECT_EQ(order(query), (std::vector{ids_[1], ids_[2]}));
  query.offset = 2;
  EXPECT_EQ(order(query), std::vector{ids_[0]});
  EXPECT_EQ(store_->count(query).value_or(-1), 3);

  const auto rows = store_->list({});
  ASSERT_TRUE(rows);
  const auto first = std::find_if(rows->begin(), rows->end(),
                                  [&](const RunSummary& row) { return row.id == ids_[0]; });
  ASSERT_NE(first, rows->end());
  EXPECT_EQ(first->first_line, "print('alpha')");  // blank leading lines skipped
  EXPECT_EQ(first->backend, "subprocess");
  EXPECT_EQ(first->language, Language::kPython);
  EXPECT_EQ(first->wall_ms, 300);
  EXPECT_EQ(first->source, "test");
}

TEST_F(HistoryQuery, DeletesOneRun) {
  ASSERT_TRUE(store_->remove(ids_[1]));
  const auto gone = store_->get(ids_[1]);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->remove(ids_[1]).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(order({}), (std::vector{ids_[2], ids_[0]}));
}

// Environment variables are process-wide: restore each one a test changes.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* value = std::getenv(name)) old_ = value;
  }
  ~EnvGuard() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HistoryPath, FollowsTheOverrideThenXdgThenHome) {
  const EnvGuard path_guard(kPathEnv), xdg_guard("XDG_DATA_HOME"), home_guard("HOME");
  ::setenv(kPathEnv, "/somewhere/h.db", 1);
  ::setenv("XDG_DATA_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_path().value(), fs::path("/somewhere/h.db"));
  ::unsetenv(kPathEnv);
  EXPECT_EQ(default_path().value(), fs::path("/xdg/cordon/history.sqlite3"));
  ::setenv("XDG_DATA_HOME", "relative/ignored", 1);
  EXPECT_EQ(default_path().value(), fs::path("/home/someone/.local/share/cordon/history.sqlite3"));
  ::unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(default_path().value(), fs::path("/home/someone/.local/share/cordon/history.sqlite3"));
}

TEST(HistoryPath, DisableSwitch) {
  const EnvGuard guard(kDisableEnv);
  ::unsetenv(kDisableEnv);
  EXPECT_FALSE(disabled_by_env());
  ::setenv(kDisableEnv, "0", 1);
  EXPECT_FALSE(disabled_by_env());
  ::setenv(kDisableEnv, "1", 1);
  EXPECT_TRUE(disabled_by_env());
}

}  // namespace
}  // namespace cordon::history
