// The host end of a run's network allow-list (issue #16): an HTTP proxy on a unix socket that
// only that run's sandbox reaches (through cordon-init's relay, libexec/init/relay.h). For each
// connection it reads one request head (proxy_request.h: CONNECT, or plain HTTP in absolute
// form), asks the policy about the name and port, resolves the name itself (the sandbox has no
// resolver), asks the policy about each address (no rebinding to loopback, private, link-local
// or metadata addresses), connects, and from then on copies bytes both ways without looking at
// them (TLS is not intercepted). Every connection attempt becomes a NetConnection (result.h):
// what was asked, allowed or denied and why, bytes each way.
//
// One proxy per run, its own threads: an accept loop and one thread per connection (bounded),
// all woken by one eventfd on stop(). Per-run limits on bytes and connections end what passes
// them, and say so.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/net_policy.h"
#include "cordon/net/resolver.h"
#include "cordon/result.h"
#include "cordon/unique_fd.h"

namespace cordon::net {

struct EgressLimits {
  std::uint64_t max_bytes = 0;        // in + out over the run; 0: no limit
  std::uint32_t max_connections = 0;  // requests over the run; 0: no limit
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds head_timeout{10000};  // for the client's request head
};

// At most this many connections are served at once (more are answered 503); at most
// kMaxNetConnections events are kept (the rest are counted).
inline constexpr int kMaxProxyConnectionsAtOnce = 64;
inline constexpr std::size_t kMaxNetConnections = 1000;

class EgressProxy {
 public:
  // Binds `socket_path` (a unix stream socket, mode 0666 so the sandbox's uid may connect; its
  // directory is what restricts it) and starts serving.
  static Result<std::unique_ptr<EgressProxy>> start(std::string socket_path, NetPolicy policy,
                                                    std::shared_ptr<Resolver> resolver,
                                                    EgressLimits limits);
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;
  ~EgressProxy();

  // Ends every connection and the listener, joins the threads, removes the socket. Idempotent.
  void stop();

  [[nodiscard]] const std::string& socket_path() const { return socket_path_; }
  [[nodiscard]] std::vector<NetConnection> events() const;
  [[nodiscard]] std::size_t dropped_events() const;
  // "bytes" or "connections" once a limit was reached.
  [[nodiscard]] std::optional<std::string> limit_reached() const;

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  EgressProxy(std::string socket_path, NetPolicy policy, std::shared_ptr<Resolver> resolver,
              EgressLimits limits, UniqueFd listener, UniqueFd stop_fd);

  void accept_loop();
  void serve(UniqueFd client);
  // Copies both ways until both ends closed, an error, the byte limit or stop(); counts into
  // the event at `index`.
  void tunnel(int client, int upstream, std::size_t index);
  std::size_t add_event(NetConnection event);
  void refuse(int client, int status, const std::string& why, NetConnection event);
  void note_limit(const char* which);

  std::string socket_path_;
  NetPolicy policy_;
  std::shared_ptr<Resolver> resolver_;
  EgressLimits limits_;
  UniqueFd listener_;
  UniqueFd stop_fd_;  // eventfd: readable once stop() began

  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint32_t> requests_{0};
  std::atomic<int> active_{0};

  mutable std::mutex mutex_;  // guards what follows
  std::vector<NetConnection> events_;
  std::size_t dropped_ = 0;
  std::optional<std::string> limit_;
  std::list<Worker> workers_;
  bool stopped_ = false;

  std::thread acceptor_;
};

}  // namespace cordon::net
