#include "mcp/history_writer.h"

#include <cstdio>
#include <utility>

namespace cordon::cli::mcp {

HistoryWriter::HistoryWriter(std::filesystem::path path)
    : path_(std::move(path)), writer_([this] { write_loop(); }) {}

HistoryWriter::~HistoryWriter() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

void HistoryWriter::add(history::RunRecord record) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(record));
  }
  wake_.notify_one();
}

void HistoryWriter::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

void HistoryWriter::write_loop() {
  std::optional<history::HistoryStore> store;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with everything stored
    history::RunRecord record = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    // One connection for the server's life; reopened after a failure (a file that was
    // unwritable may become writable).
    Result<std::int64_t> stored = fail(ErrorCode::kInternal, "not opened");
    if (!store) {
      if (Result<history::HistoryStore> opened = history::HistoryStore::open(path_); opened) {
        store.emplace(std::move(*opened));
      } else {
        stored = std::unexpected(opened.error());
      }
    }
    if (store) stored = store->add(record);
    if (!stored) {
      store.reset();
      if (!warned_) {
        std::fprintf(stderr, "cordon: warning: call not recorded in history: %s\n",
                     stored.error().describe().c_str());
      }
      warned_ = true;
    } else {
      warned_ = false;
    }
    lock.lock();
    writing_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace cordon::cli::mcp
