// The network allow-list of a run (issue #16), decided per connection by cordon's egress proxy:
// first on the name and port the code asked for, then on every address that name resolves to.
//
// Entries (--allow-net / --deny-net):
//   DOMAIN         pypi.org: that name (not its subdomains)
//   *.DOMAIN       *.pythonhosted.org: any subdomain (not the apex; not *.TLD)
//   HOST:PORT      either of the above, or an IPv4 address, with one port; [v6]:PORT
//   ADDRESS        an IPv4 or IPv6 address, any port
//   CIDR           10.1.0.0/16, fd00::/64 (no shorter than /8 for IPv4, /16 for IPv6)
// A name entry without a port allows ports 80 and 443; a deny name entry without a port denies
// every port. A deny entry wins over an allow entry.
//
// Names never lead where they should not: an address that is not public (loopback, private,
// link-local, cloud metadata, ...) is refused for a name on the list unless an address or CIDR
// entry allows it (DNS rebinding), and an address literal needs an address or CIDR entry (a
// name entry never allows a direct IP).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/net/address.h"

namespace cordon::net {

struct Decision {
  bool allowed = false;
  std::string why;  // names the entry, in words the code's author can act on
};

class NetPolicy {
 public:
  // Parses both lists; an entry that is none of the forms above is an error naming it.
  [[nodiscard]] static Result<NetPolicy> make(const std::vector<std::string>& allow,
                                              const std::vector<std::string>& deny);
  [[nodiscard]] bool empty() const { return allow_.empty(); }

  // Before resolving: the host as the client named it (a name, or an address literal with
  // or without [brackets]) and the port.
  [[nodiscard]] Decision check_target(std::string_view host, std::uint16_t port) const;
  // For each address the name resolved to (or the literal itself).
  [[nodiscard]] Decision check_address(std::string_view host, std::uint16_t port,
                                       const IpAddress& address) const;

  // Whether an allow entry names `host` (a name, or an address literal) on some port, before
  // any deny entry or resolving: which hosts a client must send to the proxy.
  [[nodiscard]] bool allows_host(std::string_view host) const;

  // The entries as canonical text (lower case, no trailing dot, CIDRs masked), in order.
  [[nodiscard]] std::vector<std::string> allow_entries() const;
  [[nodiscard]] std::vector<std::string> deny_entries() const;
  // Both lists sorted, one line: what a policy hash covers.
  [[nodiscard]] std::string canonical() const;

  struct Rule {
    enum class Kind { kName, kWildcard, kAddress };
    Kind kind = Kind::kName;
    std::string name;   // kName, kWildcard (the part after "*.")
    IpAddress address;  // kAddress: the network
    int prefix = 0;     // kAddress: 32 / 128 for one address
    std::optional<std::uint16_t> port;
    std::string text;  // canonical
  };
  // The rules, in order: what a description renders the list from.
  [[nodiscard]] const std::vector<Rule>& allow_rules() const { return allow_; }
  [[nodiscard]] const std::vector<Rule>& deny_rules() const { return deny_; }

 private:
  std::vector<Rule> allow_;
  std::vector<Rule> deny_;
};

}  // namespace cordon::net
