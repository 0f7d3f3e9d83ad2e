// Name resolution for the egress proxy (issue #16). The sandbox has no resolver of its own:
// every name the code reaches is resolved here, in the host, so the policy sees the addresses
// a name really leads to (and refuses a name that rebinds to loopback, private or metadata
// addresses) before any byte leaves.
#pragma once

#include <chrono>
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
  // the order to try them; an error when it resolves to none.
  virtual Result<std::vector<IpAddress>> resolve(std::string_view host) = 0;
};

// The host's resolver (getaddrinfo), bounded by `timeout`: a lookup that takes longer is an
// error and is left to finish on a detached thread that owns nothing of the caller's, so a
// stuck DNS server never holds up the end of a run.
class SystemResolver final : public Resolver {
 public:
  explicit SystemResolver(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}
  Result<std::vector<IpAddress>> resolve(std::string_view host) override;

 private:
  std::chrono::milliseconds timeout_;
};

// A fixed table, for tests (and a resolver override): names not in it do not resolve. Tests
// map "domains" to loopback or 198.18.0.0/15 addresses so nothing leaves the machine.
class StaticResolver final : public Resolver {
 public:
  explicit StaticResolver(std::map<std::string, std::vector<IpAddress>, std::less<>> table)
      : table_(std::move(table)) {}
  Result<std::vector<IpAddress>> resolve(std::string_view host) override;

 private:
  std::map<std::string, std::vector<IpAddress>, std::less<>> table_;
};

}  // namespace cordon::net
