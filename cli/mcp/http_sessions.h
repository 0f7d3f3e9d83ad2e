// The sessions of `cordon mcp --http`, by Mcp-Session-Id: one Session each, the POST
// streams open on it, and expiry after an idle time (a sweeper thread).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cordon/error.h"
#include "mcp/http_post_sink.h"
#include "mcp/session.h"

namespace cordon::cli::mcp {

class HttpSession {
 public:
  // `owner_scope`: the bearer token's hash, for the owner of its sandbox sessions (Session).
  explicit HttpSession(Service& service, std::string owner_scope = {})
      : session_(service, "http", std::move(owner_scope)) {}

  // Hands one POST body to the session; Session::handle is called for one body at a time
  // (the dispatch is quick: tools/calls run on the service's workers). Returns nullopt
  // once the session has been terminated.
  [[nodiscard]] std::optional<std::size_t> handle(std::string_view body,
                                                  const std::shared_ptr<PostSink>& sink);
  // Cancels every call, waits for them, and ends the streams still open: DELETE, expiry,
  // shutdown. Later handle()s return nullopt.
  void terminate();
  // Cancels the calls of these request ids (their POST's client is gone), as a
  // notifications/cancelled from the client would.
  void cancel_requests(const std::vector<nlohmann::json>& ids, std::string_view reason);

  [[nodiscard]] bool initialized() const { return session_.initialized(); }
  [[nodiscard]] std::string protocol_version() const { return session_.protocol_version(); }

  // Requests in flight keep a session from expiring; the idle time counts from the end
  // of the last one.
  void begin_request();
  void end_request();
  [[nodiscard]] bool idle_since(std::chrono::steady_clock::time_point deadline) const;

 private:
  Session session_;
  std::mutex mutex_;  // handle() and terminate() one at a time
  bool terminated_ = false;
  std::vector<std::weak_ptr<PostSink>> streams_;
  std::atomic<int> open_requests_{0};
  std::atomic<std::chrono::steady_clock::rep> last_used_{
      std::chrono::steady_clock::now().time_since_epoch().count()};
};

class SessionTable {
 public:
  // Sessions idle for `idle` are terminated by a sweeper thread started here.
  explicit SessionTable(std::chrono::milliseconds idle);
  SessionTable(const SessionTable&) = delete;
  SessionTable& operator=(const SessionTable&) = delete;
  // Stops the sweeper and terminates what is left.
  ~SessionTable();

  // Registers `session` under a new random id (128 bits, hex). Fails once closed.
  [[nodiscard]] Result<std::string> add(std::shared_ptr<HttpSession> session);
  // The live session with this id (null: never given, expired or terminated).
  [[nodiscard]] std::shared_ptr<HttpSession> find(const std::string& id) const;
  // Removes and terminates it; false if there was none.
  bool terminate(const std::string& id);
  // Refuses new sessions and terminates every one (the server stops).
  void close();

 private:
  void sweep_loop();

  const std::chrono::milliseconds idle_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions_;
  bool closed_ = false;
  std::thread sweeper_;
};

}  // namespace cordon::cli::mcp
