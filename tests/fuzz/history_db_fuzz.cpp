// A history file as it may be found on disk: truncated, corrupt, of an older or newer
// schema, or made by something else entirely. Each input becomes a database file in a
// private temporary directory, opened read-write with HistoryStore::open (which migrates
// it), then listed, counted, read row by row, added to and removed from. An input that
// starts with "SQLite format 3" is the file's bytes; any other input is an SQL script run
// on an empty file first (a quick way to reach every schema shape: old versions, missing
// columns, odd schema_version rows). The script may not attach or vacuum into other files,
// nor run long (a progress handler stops it).
// Properties: nothing throws or crashes; a store that opened is at kSchemaVersion and
// takes a new record that get() returns with the same code.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "frontend/history.h"
#include "fuzz_temp_dir.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
namespace fs = std::filesystem;
using cordon::fuzz::require;

constexpr std::string_view kMagic = "SQLite format 3";

int deny_other_files(void*, int action, const char*, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_CREATE_TRIGGER:  // a trigger could make every later add() run forever
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_VTABLE:
      return SQLITE_DENY;
    default:
      return SQLITE_OK;
  }
}

bool mentions(std::string_view script, std::string_view word) {
  const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
  for (std::size_t i = 0; i + word.size() <= script.size(); ++i) {
    std::size_t k = 0;
    while (k < word.size() && lower(script[i + k]) == word[k]) ++k;
    if (k == word.size()) return true;
  }
  return false;
}

void write_script_db(const fs::path& path, const std::string& script) {
  // VACUUM INTO writes a new file wherever it is told to.
  if (mentions(script, "vacuum")) return;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  sqlite3_set_authorizer(db, deny_other_files, nullptr);
  int budget = 2000;  // progress callbacks of 1000 VM steps each
  sqlite3_progress_handler(
      db, 1000, [](void* left) { return --*static_cast<int*>(left) <= 0 ? 1 : 0; }, &budget);
  (void)sqlite3_exec(db, script.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

void remove_db(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::remove(path.string() + suffix, ec);
  }
}

void exercise(history::HistoryStore& store) {
  require(store.schema_version() == history::kSchemaVersion);
  history::Query query;
  query.limit = 16;
  for (const auto sort :
       {history::SortKey::kTime, history::SortKey::kBackend, history::SortKey::kOutcome,
        history::SortKey::kDuration, history::SortKey::kEnvironment}) {
    query.sort = sort;
    const auto rows = store.list(query);
    if (!rows) continue;
    require(rows->size() <= 16);
    for (const history::RunSummary& row : *rows) {
      const auto record = store.get(row.id);
      if (record) (void)history::request_of(*record);
    }
  }
  (void)store.count(query);
  (void)store.sources();
  (void)store.environments();
  history::RunRecord record;
  record.source = "fuzz";
  record.code = "print('fuzz')";
  record.result = nlohmann::json::object();
  const Result<std::int64_t> id = store.add(record);
  if (!id) return;  // a corrupt file may refuse writes; it must say so, not crash
  const auto back = store.get(*id);
  if (back) require(back->code == record.code);
  (void)store.remove(*id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const fs::path path = fuzz::scratch_dir() / "history.sqlite3";
  remove_db(path);
  if (bytes.starts_with(kMagic)) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  } else {
    write_script_db(path, bytes);
  }
  {
    Result<history::HistoryStore> store = history::HistoryStore::open(path);
    if (store) {
      exercise(*store);
    } else {
      require(!store.error().message.empty());
    }
  }
  remove_db(path);
  return 0;
}
