// Session table, per-session serialisation and idle expiry of the HTTP transport.
#include "mcp/http_sessions.h"

#include <algorithm>

#include "mcp/http_token.h"

namespace cordon::cli::mcp {
namespace {

std::chrono::steady_clock::rep now_ticks() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

}  // namespace

std::optional<std::size_t> HttpSession::handle(std::string_view body,
                                               const std::shared_ptr<PostSink>& sink) {
  const std::lock_guard lock(mutex_);
  if (terminated_) return std::nullopt;
  std::erase_if(streams_, [](const auto& stream) { return stream.expired(); });
  streams_.push_back(sink);
  return session_.handle(body, sink);
}

void HttpSession::terminate() {
  // Under the lock, so no POST that raced the DELETE starts a call after cancel_all().
  const std::lock_guard lock(mutex_);
  if (terminated_) return;
  terminated_ = true;
  // Calls first (their processes die; nothing is sent), then the streams that waited for
  // them end.
  session_.cancel_all();
  for (const auto& weak : streams_) {
    if (auto stream = weak.lock()) stream->close();
  }
  streams_.clear();
}

namespace {

// Where the session's answer to a notification would go: nowhere (it sends none).
class DiscardSink final : public Sink {
 public:
  bool send(const nlohmann::json& /*message*/) override { return true; }
};

}  // namespace

void HttpSession::cancel_requests(const std::vector<nlohmann::json>& ids, std::string_view reason) {
  if (ids.empty()) return;
  const auto discard = std::make_shared<DiscardSink>();
  const std::lock_guard lock(mutex_);
  if (terminated_) return;
  // The client dropped the connection of the POST that carried these requests: the same
  // as if it had sent notifications/cancelled for each, which the session already
  // handles (kills the run, sends nothing).
  for (const auto& id : ids) {
    const nlohmann::json cancelled = {
        {"jsonrpc", "2.0"},
        {"method", "notifications/cancelled"},
        {"params", {{"requestId", id}, {"reason", reason}}},
    };
    (void)session_.handle(cancelled.dump(), discard);
  }
}

void HttpSession::begin_request() {
  ++open_requests_;
  last_used_ = now_ticks();
}

void HttpSession::end_request() {
  last_used_ = now_ticks();
  --open_requests_;
}

bool HttpSession::idle_since(std::chrono::steady_clock::time_point deadline) const {
  return open_requests_.load() == 0 && last_used_.load() < deadline.time_since_epoch().count();
}

SessionTable::SessionTable(std::chrono::milliseconds idle)
    : idle_(idle), sweeper_([this] { sweep_loop(); }) {}

SessionTable::~SessionTable() {
  close();
  if (sweeper_.joinable()) sweeper_.join();
}

Result<std::string> SessionTable::add(std::shared_ptr<HttpSession> session) {
  auto id = random_hex(16);
  if (!id) return id;
  const std::lock_guard lock(mutex_);
  if (closed_) return fail(ErrorCode::kUnavailable, "the server is stopping");
  sessions_.emplace(*id, std::move(session));
  return id;
}

std::shared_ptr<HttpSession> SessionTable::find(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

bool SessionTable::terminate(const std::string& id) {
  std::shared_ptr<HttpSession> session;
  {
    const std::lock_guard lock(mutex_);
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->terminate();  // outside the lock: it waits for the session's calls
  return true;
}

void SessionTable::close() {
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    sessions.swap(sessions_);
  }
  wake_.notify_all();
  for (auto& [id, session] : sessions) session->terminate();
}

void SessionTable::sweep_loop() {
  // Checked a few times per idle period, so a session outlives its idle time by at most a
  // quarter of it (and at most 5 s).
  const auto period = std::clamp<std::chrono::milliseconds>(
      idle_ / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(5000));
  std::unique_lock lock(mutex_);
  while (!closed_) {
    wake_.wait_for(lock, period, [this] { return closed_; });
    if (closed_) break;
    const auto deadline = std::chrono::steady_clock::now() - idle_;
    std::vector<std::shared_ptr<HttpSession>> expired;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->idle_since(deadline)) {
        expired.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (const auto& session : expired) session->terminate();
    lock.lock();
  }
}

}  // namespace cordon::cli::mcp
