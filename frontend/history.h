// The run history: every run the CLI or the inspector makes, kept in one SQLite file so
// both can write to it at once and read each other's runs.
//
// A record keeps the code, language, backend, timeout and limits, the raw stdout/stderr
// bytes and the whole Result JSON (result_json.h), and the NAMES of the environment
// variables passed to the run. The values are never stored: a RunRecord has no field for
// them, so make_record() drops them before anything reaches the database. (Output is kept
// as the code wrote it: a value the code itself prints is part of its output.)
//
// The database is in WAL mode with a busy timeout, so writers in several processes wait
// for each other instead of failing. A corrupt or unwritable file is an Error with the
// path and the reason; callers report it and carry on — recording never stops a run.
// One HistoryStore is one connection: use it from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::history {

// The schema this build writes; older files are migrated forward when opened.
inline constexpr int kSchemaVersion = 6;

// Environment variables read by default_path() and by front ends.
inline constexpr const char* kPathEnv = "CORDON_HISTORY_PATH";
inline constexpr const char* kDisableEnv = "CORDON_NO_HISTORY";  // "1": record nothing

// $CORDON_HISTORY_PATH, else $XDG_DATA_HOME/cordon/history.sqlite3, else
// ~/.local/share/cordon/history.sqlite3 (HOME, else the passwd entry).
[[nodiscard]] Result<std::filesystem::path> default_path();

// Whether $CORDON_NO_HISTORY asks front ends not to record (set and not "0" or empty).
[[nodiscard]] bool disabled_by_env();

// One recorded run.
struct RunRecord {
  std::int64_t id = 0;  // assigned by the store
  std::chrono::system_clock::time_point started;
  std::chrono::system_clock::time_point finished;
  std::string source;  // who ran it: "cli", "inspector", "mcp", ...
  std::string client;  // for source "mcp": the client's name and version from initialize
                       // (schema 4; empty for older rows)

  // What was asked for.
  std::string code;
  Language language = Language::kSh;
  std::string backend;          // the backend that ran it
  std::int64_t timeout_ms = 0;  // the effective timeout
  Limits limits;
  std::vector<std::string> env_names;  // names only, never values
  // Input files (name -> bytes) and artifact patterns, so a re-run is the same run
  // (schema 3; empty for older rows).
  std::map<std::string, std::string> input_files;
  std::vector<std::string> artifact_globs;
  // The root filesystem it ran in: "host" (digest ""), a stored environment's name and
  // digest, or name "" with the digest of an unregistered --rootfs; unset when nothing was
  // recorded (engine mode, rows from before schema 5 without one in their Result).
  std::optional<EnvironmentRef> environment;
  // A call in a session (issue #41): the session's id and the call's index in it (schema 6;
  // unset for one-shot runs and older rows).
  std::optional<SessionCallRef> session;

  // What happened.
  Outcome outcome = Outcome::kSandboxError;
  std::optional<LimitKind> limit;
  int exit_code = -1;
  std::int64_t wall_ms = 0;
  std::string stdout_data;  // raw bytes as captured
  std::string stderr_data;
  nlohmann::json result;  // to_json(RunResult), the whole Result
};

// The record of a finished run. Environment values are dropped here.
[[nodiscard]] RunRecord make_record(const RunRequest& request, const RunResult& result,
                                    std::chrono::system_clock::time_point started,
                                    std::chrono::system_clock::time_point finished,
                                    std::string source);

// A request that re-runs a record (code, language, timeout, limits, input files, artifact
// patterns, environment; no env values).
[[nodiscard]] RunRequest request_of(const RunRecord& record);

// A list row: a record without the bulky parts (output, Result JSON).
struct RunSummary {
  std::int64_t id = 0;
  std::chrono::system_clock::time_point started;
  std::string source;
  std::string client;  // for source "mcp"; empty otherwise
  std::string backend;
  std::optional<EnvironmentRef> environment;  // as RunRecord::environment
  std::optional<SessionCallRef> session;      // as RunRecord::session
  Language language = Language::kSh;
  Outcome outcome = Outcome::kSandboxError;
  std::optional<LimitKind> limit;
  int exit_code = -1;
  std::int64_t wall_ms = 0;
  std::string first_line;  // of the code
  std::string preview;     // of the code: code_preview()
};

// A one-line preview of code for lists: its non-blank lines joined with " ⏎ ", cut at
// `max_chars` bytes (on a UTF-8 boundary) with "…". More than the first line, which for
// LLM-written code is often only an import.
[[nodiscard]] std::string code_preview(std::string_view code, std::size_t max_chars = 200);

// kEnvironment: by name, then digest (none first, then unregistered --rootfs, then names).
enum class SortKey { kTime, kBackend, kOutcome, kDuration, kEnvironment };

struct Query {
  // Case-insensitive substring of the code, backend, outcome, source, client, environment
  // (name or digest) or output; empty matches everything.
  std::string search;
  // Only runs of this source ("cli", "inspector", "mcp", ...), exactly; empty: any.
  std::string source;
  // Only runs in this environment: its name exactly, or for an unregistered --rootfs
  // (which has no name) its digest exactly, as environments() lists them; empty: any.
  std::string environment;
  // Only the calls of this session (its id), in call order (sort and descending are then
  // not read); empty: any run.
  std::string session;
  SortKey sort = SortKey::kTime;
  bool descending = true;  // newest / longest / last name first
  std::int64_t limit = 100;
  std::int64_t offset = 0;
};

class HistoryStore {
 public:
  // Opens (creating the file and its parent directories) and migrates to kSchemaVersion.
  // Errors name the path: not a database, newer schema than this build, unwritable.
  [[nodiscard]] static Result<HistoryStore> open(const std::filesystem::path& path);

  HistoryStore(HistoryStore&&) noexcept;
  HistoryStore& operator=(HistoryStore&&) noexcept;
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;
  ~HistoryStore();

  [[nodiscard]] const std::filesystem::path& path() const;
  [[nodiscard]] int schema_version() const;

  // Stores the record; returns its id.
  [[nodiscard]] Result<std::int64_t> add(const RunRecord& record);
  // Stores the records in one transaction, all or none: one commit (and its WAL frames)
  // for several, as a long-lived writer with a backlog wants.
  [[nodiscard]] Status add_all(std::span<const RunRecord> records);
  [[nodiscard]] Result<std::vector<RunSummary>> list(const Query& query) const;
  // How many records match query.search, query.source and query.environment (paging
  // ignored).
  [[nodiscard]] Result<std::int64_t> count(const Query& query) const;
  // The sources of the stored runs, each once, sorted: what a filter by source offers.
  [[nodiscard]] Result<std::vector<std::string>> sources() const;
  // The environments of the stored runs as a filter by environment takes them, each once,
  // sorted: the names of named ones ("host" included), the digests of unregistered ones.
  [[nodiscard]] Result<std::vector<std::string>> environments() const;
  // kNotFound when there is no such id.
  [[nodiscard]] Result<RunRecord> get(std::int64_t id) const;
  // kNotFound when there is no such id.
  [[nodiscard]] Status remove(std::int64_t id);

 private:
  struct Impl;
  explicit HistoryStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Opens the store at `path` and adds the record: the one call a front end makes after a
// run. The error says what failed and where, in one line.
[[nodiscard]] Result<std::int64_t> record_run(const std::filesystem::path& path,
                                              const RunRecord& record);

}  // namespace cordon::history
