// A run's network allow-list, for the backends that carry one (issue #16): the egress proxy
// on a unix socket in a private directory, what the code is told (HTTP_PROXY and friends), and
// what comes back in the result. The backend hands the directory's fd and the socket's name to
// its init with the order (kRelay), which relays 127.0.0.1:kProxyPort inside the sandbox to it.
// The directory is passed as an fd, not a path or a mount, so a sandbox built before the run
// (a pooled one) reaches the run's own socket and nothing else of the host's.
#pragma once

#include <cstdint>
#include <memory>
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

// The variables a run with an allow-list gets, both spellings (curl reads only the lower
// case http_proxy; others read either): every scheme through the proxy, loopback not.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> proxy_environment();

class RunNetwork {
 public:
  // The proxy for `access` (which must have an allow-list), with `resolver` (null: the host's).
  [[nodiscard]] static Result<std::unique_ptr<RunNetwork>> start(
      const NetworkAccess& access, std::shared_ptr<Resolver> resolver = nullptr);

  [[nodiscard]] int dir_fd() const { return dir_fd_.get(); }
  [[nodiscard]] static std::string socket_name() { return std::string(kProxySocketName); }
  [[nodiscard]] static std::uint16_t port() { return kProxyPort; }

  // Stops the proxy (ending what is still open) and reports what went through.
  [[nodiscard]] NetworkReport finish();

 private:
  RunNetwork(NetworkAccess access, TempDir dir, UniqueFd dir_fd, std::unique_ptr<EgressProxy> proxy)
      : access_(std::move(access)),
        dir_(std::move(dir)),
        dir_fd_(std::move(dir_fd)),
        proxy_(std::move(proxy)) {}

  NetworkAccess access_;
  TempDir dir_;
  UniqueFd dir_fd_;
  std::unique_ptr<EgressProxy> proxy_;
};

// The run's `enforced` network entry with an allow-list: the namespace as before, egress
// only through cordon's proxy, and the list.
[[nodiscard]] Enforced allow_list_enforced(const NetworkAccess& access);

}  // namespace cordon::net
