// Network allow-list entries as people and agents type them (--allow-net, --deny-net, the MCP
// and tool-call arguments), and hosts and addresses as a sandboxed program names them to the
// proxy. Properties: nothing throws; an accepted entry's canonical text is accepted again
// and reads back to itself; an empty allow-list allows nothing; a deny entry for a name
// always wins; an address that parses prints as something that parses to it again; a name
// that resolves to a non-public address is allowed only when an address entry covers it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/net/address.h"
#include "cordon/net/net_policy.h"
#include "fuzz_util.h"

namespace {

using cordon::fuzz::require;
using namespace cordon::net;

void check_address(std::string_view text) {
  const auto address = IpAddress::parse(text);
  if (!address) return;
  const auto again = IpAddress::parse(address->to_string());
  require(again.has_value() && *again == *address);
  (void)classify(*address);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cordon::fuzz::Reader in(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  for (int i = 0; i < 4; ++i) allow.push_back(in.field());
  deny.push_back(in.field());
  const std::string host = in.field();
  const auto port = static_cast<std::uint16_t>(in.u64());
  const std::string address_text = in.field();
  for (const auto& text : {allow[0], host, address_text}) check_address(text);

  const auto empty = NetPolicy::make({}, deny);
  if (empty) {
    require(!empty->check_target(host, port).allowed);
    if (const auto a = IpAddress::parse(address_text)) {
      require(!empty->check_address(host, port, *a).allowed);
    }
  }
  const auto made = NetPolicy::make(allow, deny);
  if (!made) {
    require(!made.error().message.empty());
    return 0;
  }
  // Canonical entries are entries, and stable.
  const auto again = NetPolicy::make(made->allow_entries(), made->deny_entries());
  require(again.has_value() && again->allow_entries() == made->allow_entries() &&
          again->canonical() == made->canonical());
  const Decision target = made->check_target(host, port);
  require(!target.why.empty());
  if (const auto a = IpAddress::parse(address_text)) {
    const Decision d = made->check_address(host, port, *a);
    require(!d.why.empty());
    if (d.allowed) require(target.allowed);
    // A name reaching a non-public address: only through an address entry that covers it.
    if (d.allowed && !IpAddress::parse(host) && classify(*a) != AddressClass::kPublic) {
      const auto names_only = NetPolicy::make(
          [&] {
            std::vector<std::string> kept;
            for (const auto& e : made->allow_entries()) {
              if (!IpAddress::parse(e) && e.find('/') == std::string::npos && e.front() != '[' &&
                  !IpAddress::parse(e.substr(0, e.rfind(':')))) {
                kept.push_back(e);
              }
            }
            return kept;
          }(),
          made->deny_entries());
      require(names_only.has_value() && !names_only->check_address(host, port, *a).allowed);
    }
  }
  // A name denied by an entry of its own is never allowed, on any port.
  if (!host.empty()) {
    const auto denied = NetPolicy::make(allow, {host});
    if (denied && !IpAddress::parse(host)) require(!denied->check_target(host, port).allowed);
  }
  return 0;
}
