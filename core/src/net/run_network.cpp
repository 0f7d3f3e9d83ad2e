#include "cordon/net/run_network.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <string_view>

#include "cordon/net/net_policy.h"
#include "cordon/owner.h"

namespace cordon::net {

std::vector<std::pair<std::string, std::string>> proxy_environment(const NetworkAccess& access) {
  const std::string url = "http://127.0.0.1:" + std::to_string(kProxyPort);
  std::vector<std::pair<std::string, std::string>> env = {
      {"HTTP_PROXY", url},  {"http_proxy", url}, {"HTTPS_PROXY", url},
      {"https_proxy", url}, {"ALL_PROXY", url},  {"all_proxy", url}};
  // The sandbox's loopback is its own: what a client that honours no_proxy (curl, urllib,
  // even with an explicit proxy handler) sends there never reaches the host. A loopback
  // host the list allows goes through the proxy like any other, so it is left out.
  const Result<NetPolicy> policy = NetPolicy::make(access.allow, access.deny);
  std::string local;
  for (const std::string_view host : {"localhost", "127.0.0.1", "::1"}) {
    if (policy && policy->allows_host(host)) continue;
    local += (local.empty() ? "" : ",") + std::string(host);
  }
  if (!local.empty()) {
    env.emplace_back("NO_PROXY", local);
    env.emplace_back("no_proxy", local);
  }
  return env;
}

Result<std::unique_ptr<RunNetwork>> RunNetwork::start(const NetworkAccess& access,
                                                      std::shared_ptr<Resolver> resolver) {
  if (!access.any()) {
    return fail(ErrorCode::kInternal, "a run network without an allow-list");
  }
  // What a SIGKILLed cordon left (its proxy died with it), once per process.
  static std::once_flag swept;
  std::call_once(swept, [] { (void)sweep_stale_temp_dirs(kNetDirPrefix); });
  auto dir = TempDir::create(owned_prefix(kNetDirPrefix));
  if (!dir) return std::unexpected(dir.error());
  // 0711: the sandbox's init (another uid) may reach the socket by its name, not list.
  if (::chmod(dir->path().c_str(), 0711) != 0) {
    return fail_errno("chmod " + dir->path().string());
  }
  const std::filesystem::path path = dir->path();
  return listen(access, std::move(*dir), path, std::move(resolver));
}

Result<std::unique_ptr<RunNetwork>> RunNetwork::start_in(const NetworkAccess& access,
                                                         const std::filesystem::path& dir,
                                                         std::shared_ptr<Resolver> resolver) {
  if (!access.any()) {
    return fail(ErrorCode::kInternal, "a run network without an allow-list");
  }
  return listen(access, std::nullopt, dir, std::move(resolver));
}

Result<std::unique_ptr<RunNetwork>> RunNetwork::listen(const NetworkAccess& access,
                                                       std::optional<TempDir> own,
                                                       const std::filesystem::path& dir,
                                                       std::shared_ptr<Resolver> resolver) {
  auto policy = NetPolicy::make(access.allow, access.deny);
  if (!policy) return std::unexpected(policy.error());
  UniqueFd dir_fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return fail_errno("open " + dir.string());
  if (!resolver) resolver = std::make_shared<SystemResolver>();
  EgressLimits limits;
  limits.max_bytes = access.max_bytes.value_or(0);
  limits.max_connections = access.max_connections.value_or(0);
  auto proxy = EgressProxy::start((dir / kProxySocketName).string(), std::move(*policy),
                                  std::move(resolver), limits);
  if (!proxy) return std::unexpected(proxy.error());
  return std::unique_ptr<RunNetwork>(
      new RunNetwork(access, std::move(own), std::move(dir_fd), std::move(*proxy)));
}

NetworkReport RunNetwork::finish() {
  proxy_->stop();
  NetworkReport report;
  report.access = access_;
  report.connections = proxy_->events();
  report.dropped = proxy_->dropped_events();
  report.limit_reached = proxy_->limit_reached();
  return report;
}

void RunNetwork::enforce_in(std::vector<Enforced>& enforced) const {
  std::erase_if(enforced, [](const Enforced& e) { return e.aspect == Aspect::kNetwork; });
  enforced.insert(enforced.begin(), allow_list_enforced(access_));
}

void RunNetwork::finish_into(RunResult& result) {
  result.network = finish();
  apply_network_limit(result);
}

void RunNetwork::report_call_into(RunResult& result, CallMark* mark) const {
  std::vector<NetConnection> events = proxy_->events();
  const std::size_t from = std::min(mark->connections, events.size());
  NetworkReport report;
  report.access = access_;
  report.connections.assign(std::make_move_iterator(events.begin() + static_cast<long>(from)),
                            std::make_move_iterator(events.end()));
  const std::uint64_t dropped = proxy_->dropped_events();
  report.dropped = dropped - std::min(mark->dropped, dropped);
  report.limit_reached = proxy_->limit_reached();
  *mark = CallMark{events.size(), dropped};
  result.network = std::move(report);
  apply_network_limit(result);
}

std::string plan_words(const NetworkAccess& access) {
  return "; egress only through cordon's proxy, relayed from 127.0.0.1:" +
         std::to_string(kProxyPort) +
         " (HTTP_PROXY): " + allow_list_enforced(access).value.value_or("");
}

Enforced allow_list_enforced(const NetworkAccess& access) {
  std::string list = "allow ";
  for (std::size_t i = 0; i < access.allow.size(); ++i) {
    list += (i == 0 ? "" : ", ") + access.allow[i];
  }
  if (!access.deny.empty()) {
    list += "; deny ";
    for (std::size_t i = 0; i < access.deny.size(); ++i) {
      list += (i == 0 ? "" : ", ") + access.deny[i];
    }
  }
  if (access.max_bytes) list += "; at most " + std::to_string(*access.max_bytes) + " bytes";
  if (access.max_connections) {
    list += "; at most " + std::to_string(*access.max_connections) + " connections";
  }
  return Enforced{Aspect::kNetwork,
                  "network namespace with loopback only; egress only through cordon's proxy "
                  "(names resolved by cordon, no loopback/private/metadata addresses unless "
                  "listed as addresses)",
                  list};
}

}  // namespace cordon::net
