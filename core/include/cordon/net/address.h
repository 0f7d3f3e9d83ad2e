// IP addresses as the network allow-list sees them (issue #16): parsed strictly (an address
// that could be read two ways, 0177.0.0.1 or 127.1, is refused, not guessed at), and classed
// so that the policy can refuse what a name must never lead to: loopback, private, link-local,
// the cloud metadata addresses and the like.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::net {

struct IpAddress {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // v4: the first 4, network order

  // Dotted-quad IPv4 (four decimal octets, no leading zeros) or IPv6 (with or without
  // [brackets], no zone); anything else is nullopt.
  [[nodiscard]] static std::optional<IpAddress> parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
  // The IPv4 address inside a v4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) one.
  [[nodiscard]] std::optional<IpAddress> embedded_v4() const;
  // Whether the first `prefix` bits equal `network`'s (same family).
  [[nodiscard]] bool within(const IpAddress& network, int prefix) const;
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

enum class AddressClass {
  kPublic,
  kLoopback,     // 127.0.0.0/8, ::1
  kPrivate,      // 10/8, 172.16/12, 192.168/16, 100.64/10 (shared address space)
  kLinkLocal,    // 169.254/16, fe80::/10
  kMetadata,     // 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254
  kUniqueLocal,  // fc00::/7
  kUnspecified,  // 0.0.0.0/8, ::
  kMulticast,    // 224/4, ff00::/8
  kReserved,     // documentation, benchmarking, 240/4, 6to4, Teredo, outside 2000::/3, ...
};

[[nodiscard]] AddressClass classify(const IpAddress& address);

// "host:port", or "[host]:port" for an IPv6 literal (a host with a ':'): how the proxy, the
// policy's words and the reports name an endpoint.
[[nodiscard]] std::string format_endpoint(std::string_view host, std::uint16_t port);
// "loopback", "private", "link-local", "cloud metadata", ...
[[nodiscard]] std::string_view to_string(AddressClass address_class);

}  // namespace cordon::net
