// Name resolution for the egress proxy (issue #16). The sandbox has no resolver of its own:
// every name the code reaches is resolved here, in the host, so the policy sees the addresses
// a name really leads to (and refuses a name that rebinds to loopback, private or metadata
// addresses) before any byte leaves.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/address.h"

namespace cordon::net {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // The addresses `host` (a name, never a literal: the proxy handles those) resolves to, in
  // the order to try them; an error when it resolves to none. `cancel_fd` (or -1) turns
  // readable when the caller no longer wants the answer (the proxy's stop): a resolver that
  // waits returns an error then, at once.
  virtual Result<std::vector<IpAddress>> resolve(std::string_view host, int cancel_fd) = 0;
};

// getaddrinfo(host), its addresses without repeats: SystemResolver's default lookup.
[[nodiscard]] Result<std::vector<IpAddress>> getaddrinfo_lookup(const std::string& host);

// The host's resolver (getaddrinfo), bounded by `timeout` and by `cancel_fd`: the lookup runs
// on a detached thread that owns nothing of the caller's (its result lands in a block the
// thread shares by reference count, and is discarded when nobody waits any more), so neither
// a stuck DNS server nor a pending lookup ever holds up the end of a run (issue #40, item
// 11). glibc's getaddrinfo cannot be interrupted, and getaddrinfo_a's cancel does not stop
// a request already in progress: abandoning the thread is the one bound there is.
class SystemResolver final : public Resolver {
 public:
  // The lookup the thread runs: getaddrinfo_lookup, or a test's (one that blocks).
  using Lookup = std::function<Result<std::vector<IpAddress>>(const std::string& host)>;
  explicit SystemResolver(std::chrono::milliseconds timeout = std::chrono::seconds(5),
                          Lookup lookup = getaddrinfo_lookup)
      : timeout_(timeout), lookup_(std::move(lookup)) {}
  Result<std::vector<IpAddress>> resolve(std::string_view host, int cancel_fd) override;

 private:
  std::chrono::milliseconds timeout_;
  Lookup lookup_;
};

// A fixed table, for tests (and a resolver override): names not in it do not resolve. Tests
// map "domains" to loopback or 198.18.0.0/15 addresses so nothing leaves the machine.
class StaticResolver final : public Resolver {
 public:
  explicit StaticResolver(std::map<std::string, std::vector<IpAddress>, std::less<>> table)
      : table_(std::move(table)) {}
  Result<std::vector<IpAddress>> resolve(std::string_view host, int cancel_fd) override;

 private:
  std::map<std::string, std::vector<IpAddress>, std::less<>> table_;
};

}  // namespace cordon::net
