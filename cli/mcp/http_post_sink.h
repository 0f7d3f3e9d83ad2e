// The Sink of one POST to /mcp: collects what the session sends about that POST's
// requests (progress notifications, then the responses) for the HTTP worker that writes
// the response stream. send() never blocks on the network: the session's workers only
// queue, and the HTTP worker drains.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mcp/sink.h"

namespace cordon::cli::mcp {

class PostSink final : public Sink {
 public:
  // Queues `message` (serialised); false once the stream is closed (the client is gone,
  // the session ended or the server stops).
  bool send(const nlohmann::json& message) override;
  // A counted response that will not come (a call cancelled by the client, which the spec
  // answers with nothing): the stream no longer waits for it.
  void no_response(const nlohmann::json& id) override;

  // How many responses this POST gets: Session::handle's return value. Until it is set
  // the stream cannot be complete.
  void expect(std::size_t responses);

  struct Batch {
    std::vector<std::string> messages;  // in the order sent
    bool complete = false;              // every expected response is in `messages` or was before
    bool closed = false;                // close() was called: nothing more will come
  };
  // Takes what is queued, waiting up to `timeout` for something if nothing is.
  [[nodiscard]] Batch take(std::chrono::milliseconds timeout);

  // Stops the stream: later send()s return false and take() returns at once.
  void close();
  [[nodiscard]] bool complete() const;

  // The ids of the requests of this POST that have no response yet, out of `ids`.
  [[nodiscard]] std::vector<nlohmann::json> unanswered(
      const std::vector<nlohmann::json>& ids) const;

 private:
  [[nodiscard]] bool complete_locked() const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  std::vector<nlohmann::json> answered_;  // ids of the responses sent (or given up) so far
  std::optional<std::size_t> expected_;
  bool closed_ = false;
};

}  // namespace cordon::cli::mcp
