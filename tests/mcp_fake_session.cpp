// The fake Session (see mcp_fake_session.h).
#include "mcp_fake_session.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "mcp/session.h"
#include "mcp/transports.h"

namespace cordon::test::fake_mcp {
Stats& stats() {
  static Stats instance;
  return instance;
}
}  // namespace cordon::test::fake_mcp

namespace cordon::cli::mcp {

using nlohmann::json;

struct Session::Impl {
  std::mutex mutex;
  std::condition_variable changed;
  bool initialized = false;
  std::string version;
  std::map<std::string, bool> cancelled;  // by request id (dumped)
  std::vector<std::thread> calls;

  std::size_t one(const json& message, const std::shared_ptr<Sink>& sink) {
    if (!message.is_object() || !message.contains("method")) return 0;
    const std::string method = message.value("method", "");
    if (!message.contains("id")) {
      if (method == "notifications/cancelled") {
        const std::lock_guard lock(mutex);
        cancelled[message["params"]["requestId"].dump()] = true;
        changed.notify_all();
      }
      return 0;
    }
    const json& id = message["id"];
    const auto reply = [&](json result) {
      sink->send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
    };
    if (method == "initialize") {
      {
        const std::lock_guard lock(mutex);
        initialized = true;
        version = message["params"].value("protocolVersion", "2025-06-18");
      }
      reply({{"protocolVersion", version},
             {"capabilities", json::object()},
             {"serverInfo", {{"name", "fake"}, {"version", "0"}}}});
    } else if (method == "ping") {
      reply(json::object());
    } else if (method == "slow") {
      const int ms = message["params"].value("ms", 100);
      const std::lock_guard lock(mutex);
      cancelled[id.dump()] = false;
      calls.emplace_back([this, id, ms, sink] { slow(id, ms, sink); });
    } else {
      sink->send({{"jsonrpc", "2.0"},
                  {"id", id},
                  {"error", {{"code", -32601}, {"message", "no such method"}}}});
    }
    return 1;
  }

  void slow(const json& id, int ms, const std::shared_ptr<Sink>& sink) {
    const bool sent = sink->send({{"jsonrpc", "2.0"},
                                  {"method", "notifications/progress"},
                                  {"params", {{"progressToken", id}, {"progress", 1}}}});
    std::unique_lock lock(mutex);
    const bool stopped = !sent || changed.wait_for(lock, std::chrono::milliseconds(ms),
                                                   [&] { return cancelled[id.dump()]; });
    lock.unlock();
    if (stopped) {
      // As the real session does: a cancelled request gets no response, and says so.
      sink->no_response(id);
      ++test::fake_mcp::stats().cancelled_calls;
    } else if (!sink->send({{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"slept", ms}}}})) {
      ++test::fake_mcp::stats().cancelled_calls;
    } else {
      ++test::fake_mcp::stats().finished_calls;
    }
  }

  void stop_all() {
    std::vector<std::thread> running;
    {
      const std::lock_guard lock(mutex);
      for (auto& [id, flag] : cancelled) flag = true;
      running.swap(calls);
    }
    changed.notify_all();
    for (auto& call : running) call.join();
  }
};

// NOLINTNEXTLINE(performance-unnecessary-value-param): the signature is session.h's
Session::Session(Service& /*service*/, std::string /*transport*/, std::string /*owner_scope*/)
    : impl_(std::make_unique<Impl>()) {}

Session::~Session() { impl_->stop_all(); }

std::size_t Session::handle(std::string_view text, const std::shared_ptr<Sink>& sink) {
  const json message = json::parse(text, nullptr, false);
  if (message.is_discarded()) {
    sink->send({{"jsonrpc", "2.0"},
                {"id", nullptr},
                {"error", {{"code", -32700}, {"message", "parse error"}}}});
    return 1;
  }
  if (!message.is_array()) return impl_->one(message, sink);
  std::size_t responses = 0;
  for (const auto& item : message) responses += impl_->one(item, sink);
  return responses;
}

bool Session::initialized() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->initialized;
}

std::string Session::protocol_version() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->version;
}

void Session::cancel_all() {
  ++test::fake_mcp::stats().cancel_all_calls;
  impl_->stop_all();
}

std::optional<NotReady> not_ready(const Service& /*service*/) {
  if (!test::fake_mcp::stats().auditing) return std::nullopt;
  return NotReady{.message = "auditing this host for the fake backend (3 of 27 attempts)",
                  .retry_after_seconds = 5};
}

}  // namespace cordon::cli::mcp
