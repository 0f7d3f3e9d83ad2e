// What the MCP tests share: a Sink that keeps every message and lets a test wait for one,
// and a look for processes a run left behind (by a marker on their command line).
#pragma once

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/sink.h"
#include "proc_test_support.h"

namespace cordon::testing {

class RecordingSink final : public cli::mcp::Sink {
 public:
  bool send(const nlohmann::json& message) override {
    {
      const std::lock_guard lock(mutex_);
      messages_.push_back(message);
    }
    changed_.notify_all();
    return true;
  }

  void no_response(const nlohmann::json& id) override {
    {
      const std::lock_guard lock(mutex_);
      no_response_.push_back(id);
    }
    changed_.notify_all();
  }

  // Whether the session said the request with this id gets no response, waiting up to
  // `within`.
  bool told_no_response(const nlohmann::json& id, std::chrono::milliseconds within) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, within, [&] {
      return std::find(no_response_.begin(), no_response_.end(), id) != no_response_.end();
    });
  }

  // The response with this id, waiting up to `within`.
  std::optional<nlohmann::json> response(const nlohmann::json& id,
                                         std::chrono::milliseconds within) {
    std::unique_lock lock(mutex_);
    std::optional<nlohmann::json> found;
    changed_.wait_for(lock, within, [&] {
      for (const nlohmann::json& m : messages_) {
        if (m.contains("id") && m["id"] == id && !m.contains("method")) {
          found = m;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::vector<nlohmann::json> messages() {
    const std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> messages_;
  std::vector<nlohmann::json> no_response_;
};

// Processes whose command line contains `marker`.
inline int processes_with(const std::string& marker) {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // read_file(), not an istreambuf_iterator: a process that exits while it is read makes
    // the read fail (ESRCH, seen with ctest -j2), which read_file() absorbs. Gone: not counted.
    const std::string cmdline = read_file("/proc/" + name + "/cmdline").value_or("");
    // A zombie has an empty command line: it is gone already.
    if (cmdline.find(marker) != std::string::npos) ++count;
  }
  ::closedir(proc);
  return count;
}

// Polls `predicate` every 20 ms up to `within`.
template <typename F>
bool eventually(F predicate, std::chrono::milliseconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return predicate();
}

}  // namespace cordon::testing
