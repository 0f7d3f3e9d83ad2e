// JSON-RPC 2.0 answers a batch with one array holding its responses, sent once the last of
// them is in (and nothing at all when the batch held only notifications). A batch's
// tools/call responses come later, from the workers that ran them, so the array is put
// together here: a Sink in front of the transport's, for one batch. Notifications about
// the batch's requests (progress) pass straight through.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "mcp/sink.h"

namespace cordon::cli::mcp {

class BatchSink final : public Sink {
 public:
  explicit BatchSink(std::shared_ptr<Sink> inner) : inner_(std::move(inner)) {}

  bool send(const nlohmann::json& message) override;
  void no_response(const nlohmann::json& id) override;
  // How many responses the batch gets (Session::handle's count); the array goes out when
  // that many have been sent or given up.
  void expect(std::size_t responses);

 private:
  // Sends the array once complete; false when the transport's sink refused it.
  bool flush_locked();

  std::shared_ptr<Sink> inner_;
  std::mutex mutex_;
  std::vector<nlohmann::json> responses_;
  std::size_t settled_ = 0;  // responses sent plus those given up (cancelled)
  std::optional<std::size_t> expected_;
  bool flushed_ = false;
  bool peer_gone_ = false;
};

}  // namespace cordon::cli::mcp
