// Records finished calls in the history off the latency path: the worker hands the record
// over after the response is sent, and one writer thread (one HistoryStore connection)
// stores it. Nothing is lost: the destructor stores everything still queued.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "frontend/history.h"
#include "frontend_names.h"

namespace cordon::cli::mcp {

class HistoryWriter {
 public:
  explicit HistoryWriter(std::filesystem::path path);
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;
  // Stores what is still queued, then stops.
  ~HistoryWriter();

  void add(history::RunRecord record);
  // Waits until every record added so far is stored (or failed to be).
  void flush();

 private:
  // At most this many records per transaction, so one commit stays short.
  static constexpr std::size_t kBatchMax = 64;

  void write_loop();
  // Writer thread: stores `batch`, opening `store` first when it is not open.
  void store_batch(std::optional<history::HistoryStore>& store,
                   const std::vector<history::RunRecord>& batch);

  std::filesystem::path path_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<history::RunRecord> queue_;
  bool writing_ = false;
  bool stopping_ = false;
  bool warned_ = false;  // writer thread only: one warning per failure streak
  std::thread writer_;   // last: started once everything above exists
};

}  // namespace cordon::cli::mcp
