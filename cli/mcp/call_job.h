// One accepted tools/call: queued, run on a worker (one-shot on the backend, in a sandbox
// session through the registry, or a session tool's operation), answered on its session's
// sink, then (a run) recorded in the history. While it runs it counts the output, and with a
// progress token it sends notifications/progress every kProgressInterval.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/request.h"
#include "mcp/call_queue.h"
#include "mcp/sink.h"

namespace cordon::cli::mcp {

class Service;

inline constexpr std::chrono::milliseconds kProgressInterval{250};

// The session a call belongs to; told when the call is over.
class CallOwner {
 public:
  virtual ~CallOwner() = default;
  // The call with this key has ended (ran, or never will): the owner forgets it. The call
  // touches nothing of its owner after this.
  virtual void call_finished(const std::string& key) = 0;
  // A send to the peer failed: it is gone, so the owner cancels its other calls.
  virtual void peer_gone() = 0;
};

// A run_code call in a session (issue #41): which one, and whose call it is.
struct SessionTarget {
  std::string id;
  std::string owner;
};

// A session tool's work (issue #41), run on a worker like a call: the tools/call result.
using SessionOperation = std::function<nlohmann::json(const CancelToken&)>;

struct CallSpec {
  nlohmann::json id;
  std::string key;  // jsonrpc::id_key(id)
  std::shared_ptr<Sink> sink;
  std::optional<nlohmann::json> progress_token;
  RunRequest request;
  std::optional<SessionTarget> session;  // run_code in this session, not one-shot
  SessionOperation operation;            // set: a session tool, not a run (no history)
  bool structured = false;               // structuredContent in the result (protocol version)
  std::string client;                    // for the history: "name version"
};

class CallJob final : public Job, private RunObserver {
 public:
  CallJob(Service& service, CallOwner& owner, CallSpec spec);

  void run() override;
  void drop() override;
  // Ends a call that never ran (withdrawn from the queue, or dropped): the sink hears that
  // no response comes, the owner forgets the call.
  void end_unrun();

  // The request was cancelled (or its session is going away): the run is stopped, or never
  // starts, and no response is sent.
  void withdraw();
  [[nodiscard]] const std::string& key() const { return spec_.key; }

 private:
  void on_output(Stream stream, std::string_view chunk, bool kept) override;
  void tick(std::chrono::steady_clock::time_point now, std::int64_t* last_progress);

  Service& service_;
  CallOwner& owner_;
  CallSpec spec_;
  CancelSource cancel_;
  std::atomic<bool> withdrawn_{false};
  std::atomic<std::uint64_t> output_bytes_{0};
  std::chrono::steady_clock::time_point received_;
};

}  // namespace cordon::cli::mcp
