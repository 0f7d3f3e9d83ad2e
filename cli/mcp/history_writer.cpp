#include "mcp/history_writer.h"

#include <cstdio>
#include <utility>
#include <vector>

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
    // Everything queued, in one transaction: with calls in flight the records come faster
    // than one commit each can keep up with on a shared machine's CPU, and a commit of
    // several writes each changed page once.
    std::vector<history::RunRecord> batch;
    while (!queue_.empty() && batch.size() < kBatchMax) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    writing_ = true;
    lock.unlock();
    store_batch(store, batch);
    lock.lock();
    writing_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void HistoryWriter::store_batch(std::optional<history::HistoryStore>& store,
                                const std::vector<history::RunRecord>& batch) {
  // One connection for the server's life; reopened after a failure (a file that was
  // unwritable may become writable).
  Status stored = fail(ErrorCode::kInternal, "not opened");
  if (!store) {
    if (Result<history::HistoryStore> opened = history::HistoryStore::open(path_); opened) {
      store.emplace(std::move(*opened));
    } else {
      stored = std::unexpected(opened.error());
    }
  }
  if (store) stored = store->add_all(batch);
  if (!stored && store && batch.size() > 1) {
    // All or none failed: a record the database refuses must not take the others with it,
    // so each goes on its own (one failure is still one warning below).
    stored = {};
    for (const history::RunRecord& record : batch) {
      if (auto added = store->add(record); !added && stored)
        stored = std::unexpected(added.error());
    }
  }
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
}

}  // namespace cordon::cli::mcp
