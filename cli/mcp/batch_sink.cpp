#include "mcp/batch_sink.h"

namespace cordon::cli::mcp {

bool BatchSink::send(const nlohmann::json& message) {
  if (!is_response(message)) return inner_->send(message);
  const std::lock_guard lock(mutex_);
  if (peer_gone_) return false;
  responses_.push_back(message);
  ++settled_;
  return flush_locked();
}

void BatchSink::no_response(const nlohmann::json& id) {
  const std::lock_guard lock(mutex_);
  ++settled_;
  inner_->no_response(id);
  (void)flush_locked();
}

void BatchSink::expect(std::size_t responses) {
  const std::lock_guard lock(mutex_);
  expected_ = responses;
  (void)flush_locked();
}

bool BatchSink::flush_locked() {
  if (flushed_ || !expected_ || settled_ < *expected_) return !peer_gone_;
  flushed_ = true;
  // Every request of the batch was cancelled: JSON-RPC sends no empty array.
  if (responses_.empty()) return true;
  peer_gone_ = !inner_->send(nlohmann::json(std::move(responses_)));
  responses_.clear();
  return !peer_gone_;
}

}  // namespace cordon::cli::mcp
