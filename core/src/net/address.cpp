#include "cordon/net/address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace cordon::net {

namespace {

std::optional<IpAddress> parse_v4(std::string_view text) {
  IpAddress out;
  int part = 0;
  std::size_t at = 0;
  while (part < 4) {
    std::size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
    const std::size_t digits = end - at;
    if (digits == 0 || digits > 3 || (digits > 1 && text[at] == '0')) return std::nullopt;
    int value = 0;
    for (std::size_t i = at; i < end; ++i) value = value * 10 + (text[i] - '0');
    if (value > 255) return std::nullopt;
    out.bytes[static_cast<std::size_t>(part)] = static_cast<std::uint8_t>(value);
    ++part;
    if (part < 4) {
      if (end >= text.size() || text[end] != '.') return std::nullopt;
      at = end + 1;
    } else if (end != text.size()) {
      return std::nullopt;
    }
  }
  return out;
}

IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  IpAddress out;
  out.bytes[0] = a;
  out.bytes[1] = b;
  out.bytes[2] = c;
  out.bytes[3] = d;
  return out;
}

IpAddress v6_literal(std::string_view text) { return *IpAddress::parse(text); }

// A range of addresses of one class; a table of them is searched in order.
struct Range {
  IpAddress network;
  int prefix;
  AddressClass kind;
};

template <std::size_t N>
AddressClass class_in(const Range (&ranges)[N], const IpAddress& a, AddressClass otherwise) {
  for (const Range& r : ranges) {
    if (a.within(r.network, r.prefix)) return r.kind;
  }
  return otherwise;
}

AddressClass classify_v4(const IpAddress& a) {
  // Most specific first: the metadata addresses sit inside link-local and shared space.
  static const Range kRanges[] = {
      {v4(169, 254, 169, 254), 32, AddressClass::kMetadata},
      {v4(169, 254, 170, 2), 32, AddressClass::kMetadata},
      {v4(100, 100, 100, 200), 32, AddressClass::kMetadata},
      {v4(0, 0, 0, 0), 8, AddressClass::kUnspecified},
      {v4(10, 0, 0, 0), 8, AddressClass::kPrivate},
      {v4(100, 64, 0, 0), 10, AddressClass::kPrivate},
      {v4(127, 0, 0, 0), 8, AddressClass::kLoopback},
      {v4(169, 254, 0, 0), 16, AddressClass::kLinkLocal},
      {v4(172, 16, 0, 0), 12, AddressClass::kPrivate},
      {v4(192, 0, 0, 0), 24, AddressClass::kReserved},
      {v4(192, 0, 2, 0), 24, AddressClass::kReserved},
      {v4(192, 88, 99, 0), 24, AddressClass::kReserved},
      {v4(192, 168, 0, 0), 16, AddressClass::kPrivate},
      {v4(198, 18, 0, 0), 15, AddressClass::kReserved},
      {v4(198, 51, 100, 0), 24, AddressClass::kReserved},
      {v4(203, 0, 113, 0), 24, AddressClass::kReserved},
      {v4(224, 0, 0, 0), 4, AddressClass::kMulticast},
      {v4(240, 0, 0, 0), 4, AddressClass::kReserved},
  };
  return class_in(kRanges, a, AddressClass::kPublic);
}

AddressClass classify_v6(const IpAddress& a) {
  static const Range kRanges[] = {
      {v6_literal("fd00:ec2::254"), 128, AddressClass::kMetadata},
      {v6_literal("::"), 128, AddressClass::kUnspecified},
      {v6_literal("::1"), 128, AddressClass::kLoopback},
      {v6_literal("::"), 96, AddressClass::kReserved},  // IPv4-compatible (deprecated)
      {v6_literal("100::"), 64, AddressClass::kReserved},
      {v6_literal("2001::"), 32, AddressClass::kReserved},      // Teredo
      {v6_literal("2001:db8::"), 32, AddressClass::kReserved},  // documentation
      {v6_literal("2002::"), 16, AddressClass::kReserved},      // 6to4: an IPv4 address inside
      {v6_literal("fc00::"), 7, AddressClass::kUniqueLocal},
      {v6_literal("fe80::"), 10, AddressClass::kLinkLocal},
      {v6_literal("ff00::"), 8, AddressClass::kMulticast},
  };
  // Global unicast is 2000::/3; anything outside it not listed above is not assigned.
  static const Range kGlobal[] = {{v6_literal("2000::"), 3, AddressClass::kPublic}};
  const AddressClass listed = class_in(kRanges, a, AddressClass::kPublic);
  return listed != AddressClass::kPublic ? listed : class_in(kGlobal, a, AddressClass::kReserved);
}

}  // namespace

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (auto four = parse_v4(text)) return four;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() > 45 || text.find(':') == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string copy(text);
  IpAddress out;
  out.v6 = true;
  if (::inet_pton(AF_INET6, copy.c_str(), out.bytes.data()) != 1) return std::nullopt;
  return out;
}

std::string IpAddress::to_string() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buffer, sizeof(buffer));
  return buffer;
}

std::optional<IpAddress> IpAddress::embedded_v4() const {
  if (!v6) return std::nullopt;
  static const IpAddress kMapped = v6_literal("::ffff:0:0");
  static const IpAddress kNat64 = v6_literal("64:ff9b::");
  if (!within(kMapped, 96) && !within(kNat64, 96)) return std::nullopt;
  return v4(bytes[12], bytes[13], bytes[14], bytes[15]);
}

bool IpAddress::within(const IpAddress& network, int prefix) const {
  if (v6 != network.v6) return false;
  const int bits = v6 ? 128 : 32;
  prefix = std::clamp(prefix, 0, bits);
  for (int i = 0; i < prefix / 8; ++i) {
    if (bytes[static_cast<std::size_t>(i)] != network.bytes[static_cast<std::size_t>(i)]) {
      return false;
    }
  }
  if (const int rest = prefix % 8; rest != 0) {
    const auto mask = static_cast<std::uint8_t>(0xFF << (8 - rest));
    const auto at = static_cast<std::size_t>(prefix / 8);
    if ((bytes[at] & mask) != (network.bytes[at] & mask)) return false;
  }
  return true;
}

AddressClass classify(const IpAddress& address) {
  if (const auto inner = address.embedded_v4()) return classify_v4(*inner);
  return address.v6 ? classify_v6(address) : classify_v4(address);
}

std::string format_endpoint(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::string_view to_string(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kPrivate:
      return "private";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kMetadata:
      return "cloud metadata";
    case AddressClass::kUniqueLocal:
      return "unique local";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "unknown";
}

}  // namespace cordon::net
