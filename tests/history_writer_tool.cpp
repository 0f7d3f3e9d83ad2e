// A history writer for tests/crash_test.py: stores N records into one history database
// with the HistoryStore itself, the way the inspector does (app/models), while other
// processes (`cordon run`, `cordon mcp`) write into the same file.
//
//   history_writer_tool PATH COUNT TAG once   one record_run() per record: open, add,
//                                             close (the inspector's RunController)
//   history_writer_tool PATH COUNT TAG held   one store held open, each add() followed by
//                                             a list() (the inspector's HistoryModel)
//
// Record i has the code "TAG-i". Prints every failure on stderr; exits 1 if any.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "frontend/history.h"

namespace {

cordon::history::RunRecord record_of(const std::string& tag, int i) {
  cordon::RunRequest request;
  request.code = tag + "-" + std::to_string(i);
  cordon::RunResult result;
  result.outcome = cordon::Outcome::kOk;
  result.exit_code = 0;
  result.stdout_data = request.code + "\n";
  const auto now = std::chrono::system_clock::now();
  return cordon::history::make_record(request, result, now, now, "inspector");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: history_writer_tool PATH COUNT TAG once|held\n");
    return 2;
  }
  const std::filesystem::path path = argv[1];
  const int count = std::atoi(argv[2]);
  const std::string tag = argv[3];
  const bool held = std::string(argv[4]) == "held";
  int failures = 0;
  std::optional<cordon::history::HistoryStore> store;
  for (int i = 0; i < count; ++i) {
    cordon::Result<std::int64_t> stored = cordon::fail(cordon::ErrorCode::kInternal, "not run");
    if (!held) {
      stored = cordon::history::record_run(path, record_of(tag, i));
    } else {
      if (!store) {
        auto opened = cordon::history::HistoryStore::open(path);
        if (!opened) {
          std::fprintf(stderr, "open: %s\n", opened.error().describe().c_str());
          ++failures;
          continue;
        }
        store.emplace(std::move(*opened));
      }
      stored = store->add(record_of(tag, i));
      // The History view reads the newest page after each run it sees.
      if (auto page = store->list({}); !page) {
        std::fprintf(stderr, "list: %s\n", page.error().describe().c_str());
      }
    }
    if (!stored) {
      std::fprintf(stderr, "record %d: %s\n", i, stored.error().describe().c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
