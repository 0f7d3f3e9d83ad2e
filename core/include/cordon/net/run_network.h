// A run's network allow-list, for the backends that carry one (issue #16): the egress proxy
// on a unix socket in a private directory, what the code is told (HTTP_PROXY and friends), and
// what comes back in the result. The backend hands the directory's fd and the socket's name to
// its init with the order (kRelay), which relays 127.0.0.1:kProxyPort inside the sandbox to it.
// The directory is passed as an fd, not a path or a mount, so a sandbox built before the run
// (a pooled one) reaches the run's own socket and nothing else of the host's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/egress_proxy.h"
#include "cordon/net/resolver.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/temp_dir.h"
#include "cordon/unique_fd.h"

namespace cordon::net {

// The loopback port the relay listens on inside the sandbox (squid's, so tools that assume a
// proxy there find it); the sandbox has a network namespace of its own, so it is always free.
inline constexpr std::uint16_t kProxyPort = 3128;
inline constexpr std::string_view kProxySocketName = "proxy.sock";
inline constexpr std::string_view kNetDirPrefix = "cordon-net-";

// The variables a run with `access` (an allow-list) gets, both spellings (curl reads only the
// lower case http_proxy; others read either): every scheme through the proxy; the sandbox's
// own loopback (localhost, 127.0.0.1, ::1) not, except a loopback host the list allows,
// which is the host's and so reached through the proxy.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> proxy_environment(
    const NetworkAccess& access);

class RunNetwork {
 public:
  // The proxy for `access` (which must have an allow-list), with `resolver` (null: the host's),
  // its socket in a private directory of its own.
  [[nodiscard]] static Result<std::unique_ptr<RunNetwork>> start(
      const NetworkAccess& access, std::shared_ptr<Resolver> resolver = nullptr);
  // The same with the socket in `dir`, a directory of the sandbox's that the caller owns and
  // that only this run's sandbox sees (the container backend's bundle code/ directory, bound
  // read-only into the container): the socket is removed by finish(), the directory is not.
  [[nodiscard]] static Result<std::unique_ptr<RunNetwork>> start_in(
      const NetworkAccess& access, const std::filesystem::path& dir,
      std::shared_ptr<Resolver> resolver = nullptr);

  [[nodiscard]] int dir_fd() const { return dir_fd_.get(); }
  [[nodiscard]] const NetworkAccess& access() const { return access_; }
  [[nodiscard]] static std::string socket_name() { return std::string(kProxySocketName); }
  [[nodiscard]] static std::uint16_t port() { return kProxyPort; }

  // Stops the proxy (ending what is still open) and reports what went through.
  [[nodiscard]] NetworkReport finish();
  // What every backend that carries a list does around its run: the run's `enforced` gets
  // the list's network entry in place of the closed namespace's (first), and the finished
  // result gets finish()'s report and the network limit's rule (apply_network_limit()).
  void enforce_in(std::vector<Enforced>& enforced) const;
  void finish_into(RunResult& result);
  // A session's proxy serves call after call and stops only with the session (its byte and
  // connection limits count across calls): each call's result gets what went through since
  // `*mark` (where the previous call's report ended), and `*mark` moves on.
  struct CallMark {
    std::size_t connections = 0;
    std::uint64_t dropped = 0;
  };
  void report_call_into(RunResult& result, CallMark* mark) const;

 private:
  RunNetwork(NetworkAccess access, std::optional<TempDir> dir, UniqueFd dir_fd,
             std::unique_ptr<EgressProxy> proxy)
      : access_(std::move(access)),
        dir_(std::move(dir)),
        dir_fd_(std::move(dir_fd)),
        proxy_(std::move(proxy)) {}
  [[nodiscard]] static Result<std::unique_ptr<RunNetwork>> listen(
      const NetworkAccess& access, std::optional<TempDir> own, const std::filesystem::path& dir,
      std::shared_ptr<Resolver> resolver);

  NetworkAccess access_;
  std::optional<TempDir> dir_;  // the private directory start() made; none for start_in()
  UniqueFd dir_fd_;
  std::unique_ptr<EgressProxy> proxy_;
};

// What a plan adds to its network line for a run with this list: "; egress only through
// cordon's proxy, relayed from 127.0.0.1:3128 (HTTP_PROXY): allow ...".
[[nodiscard]] std::string plan_words(const NetworkAccess& access);

// The run's `enforced` network entry with an allow-list: the namespace as before, egress
// only through cordon's proxy, and the list.
[[nodiscard]] Enforced allow_list_enforced(const NetworkAccess& access);

}  // namespace cordon::net
