// One POST's outgoing messages, handed from the session's workers to the HTTP worker.
#include "mcp/http_post_sink.h"

#include <algorithm>

namespace cordon::cli::mcp {

bool PostSink::send(const nlohmann::json& message) {
  // Serialised here, on the sender's thread, so the HTTP worker only copies bytes.
  std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  {
    const std::lock_guard lock(mutex_);
    if (closed_) return false;
    if (is_response(message)) answered_.push_back(message["id"]);
    queue_.push_back(std::move(text));
  }
  changed_.notify_all();
  return true;
}

void PostSink::no_response(const nlohmann::json& id) {
  {
    const std::lock_guard lock(mutex_);
    answered_.push_back(id);
  }
  changed_.notify_all();
}

void PostSink::expect(std::size_t responses) {
  {
    const std::lock_guard lock(mutex_);
    expected_ = responses;
  }
  changed_.notify_all();
}

bool PostSink::complete_locked() const { return expected_ && answered_.size() >= *expected_; }

PostSink::Batch PostSink::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [this] { return closed_ || !queue_.empty() || complete_locked(); });
  Batch batch;
  batch.messages.assign(std::make_move_iterator(queue_.begin()),
                        std::make_move_iterator(queue_.end()));
  queue_.clear();
  batch.complete = complete_locked();
  batch.closed = closed_;
  return batch;
}

void PostSink::close() {
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

bool PostSink::complete() const {
  const std::lock_guard lock(mutex_);
  return complete_locked();
}

std::vector<nlohmann::json> PostSink::unanswered(const std::vector<nlohmann::json>& ids) const {
  const std::lock_guard lock(mutex_);
  std::vector<nlohmann::json> out;
  for (const auto& id : ids) {
    if (std::ranges::find(answered_, id) == answered_.end()) out.push_back(id);
  }
  return out;
}

}  // namespace cordon::cli::mcp
