#include "cordon/net/net_policy.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "cordon/text.h"

namespace cordon::net {

namespace {

using Rule = NetPolicy::Rule;
using Kind = Rule::Kind;

// A DNS name in LDH form: labels of 1-63 letters, digits and hyphens, not starting or ending
// with a hyphen, 253 characters in all; the last label not all digits (127.1 is no name).
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  std::string_view last;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    if (!std::all_of(label.begin(), label.end(), [](unsigned char c) {
          return std::isdigit(c) != 0 || (c >= 'a' && c <= 'z') || c == '-';
        })) {
      return false;
    }
    last = label;
    start = dot + 1;
    if (dot == name.size()) break;
  }
  return !std::all_of(last.begin(), last.end(),
                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The host as compared: lower case, no trailing dot, no brackets.
std::string normal_host(std::string_view host) {
  std::string out = ascii_lower(host);
  if (out.size() > 2 && out.front() == '[' && out.back() == ']')
    out = out.substr(1, out.size() - 2);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      (text.size() > 1 && text.front() == '0') || value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// An entry's text with its port, when it has one (format_endpoint() brackets an IPv6 one).
std::string with_port(const std::string& text, const std::optional<std::uint16_t>& port) {
  return port ? format_endpoint(text, *port) : text;
}

Error bad_entry(std::string_view entry, std::string_view why) {
  return Error{ErrorCode::kInvalidArgument, 0,
               "'" + std::string(entry) + "' is not a network entry: " + std::string(why)};
}

Result<Rule> parse_rule(std::string_view entry) {
  if (entry.empty()) return std::unexpected(bad_entry(entry, "it is empty"));
  if (entry.size() > 300) return std::unexpected(bad_entry(entry.substr(0, 40), "it is too long"));
  if (std::any_of(entry.begin(), entry.end(),
                  [](unsigned char c) { return std::isspace(c) != 0 || c < 0x20 || c >= 0x7f; })) {
    return std::unexpected(bad_entry(entry, "it holds spaces or characters no host name has"));
  }
  if (entry == "*" || entry == "*.*" || entry == "*:*") {
    return std::unexpected(
        bad_entry(entry, "that would allow everything; name the domains the code needs"));
  }
  Rule rule;
  std::string_view host = entry;
  // [v6] or [v6]:port
  if (entry.front() == '[') {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) {
      return std::unexpected(bad_entry(entry, "a '[' without its ']'"));
    }
    host = entry.substr(1, close - 1);
    const std::string_view rest = entry.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() == ':') rule.port = parse_port(rest.substr(1));
      if (!rule.port) {
        return std::unexpected(bad_entry(entry, "the port after ']:' must be 1 to 65535"));
      }
    }
    const auto address = IpAddress::parse(host);
    if (!address || !address->v6) {
      return std::unexpected(bad_entry(entry, "brackets hold an IPv6 address"));
    }
    rule.kind = Kind::kAddress;
    rule.address = *address;
    rule.prefix = 128;
    rule.text = with_port(address->to_string(), rule.port);
    return rule;
  }
  // CIDR
  if (const auto slash = entry.find('/'); slash != std::string_view::npos) {
    const auto address = IpAddress::parse(entry.substr(0, slash));
    int prefix = -1;
    const std::string_view bits = entry.substr(slash + 1);
    const auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
    if (!address || ec != std::errc() || end != bits.data() + bits.size() || bits.empty()) {
      return std::unexpected(bad_entry(entry, "a CIDR is ADDRESS/BITS, e.g. 10.1.0.0/16"));
    }
    const int most = address->v6 ? 128 : 32;
    const int least = address->v6 ? 16 : 8;
    if (prefix > most) {
      return std::unexpected(
          bad_entry(entry, "the prefix is longer than the address (" + std::to_string(most) + ")"));
    }
    if (prefix < least) {
      return std::unexpected(bad_entry(
          entry, "a prefix shorter than /" + std::to_string(least) +
                     " covers too much of the internet; name the networks the code needs"));
    }
    rule.kind = Kind::kAddress;
    rule.prefix = prefix;
    // Masked, so 10.1.2.3/16 and 10.1.0.0/16 are one entry.
    rule.address = *address;
    for (int bit = prefix; bit < most; ++bit) {
      rule.address.bytes[static_cast<std::size_t>(bit / 8)] &=
          static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
    }
    rule.text = rule.address.to_string() + "/" + std::to_string(prefix);
    return rule;
  }
  // An address alone (IPv4, or IPv6 without brackets and so without a port).
  if (const auto address = IpAddress::parse(entry)) {
    rule.kind = Kind::kAddress;
    rule.address = *address;
    rule.prefix = address->v6 ? 128 : 32;
    rule.text = address->to_string();
    return rule;
  }
  // HOST:PORT (one colon: more is an IPv6 address that did not parse, or junk)
  if (const auto colon = entry.find(':'); colon != std::string_view::npos) {
    if (entry.find(':', colon + 1) != std::string_view::npos) {
      return std::unexpected(
          bad_entry(entry, "an IPv6 address with a port is written [ADDRESS]:PORT"));
    }
    rule.port = parse_port(entry.substr(colon + 1));
    if (!rule.port) return std::unexpected(bad_entry(entry, "the port must be 1 to 65535"));
    host = entry.substr(0, colon);
    if (const auto address = IpAddress::parse(host); address && !address->v6) {
      rule.kind = Kind::kAddress;
      rule.address = *address;
      rule.prefix = 32;
      rule.text = with_port(address->to_string(), rule.port);
      return rule;
    }
  }
  std::string name = ascii_lower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (name.starts_with("*.")) {
    name = name.substr(2);
    if (!valid_name(name)) {
      return std::unexpected(bad_entry(entry, "after '*.' comes a domain name"));
    }
    if (name.find('.') == std::string::npos) {
      return std::unexpected(
          bad_entry(entry, "*.TLD covers too much; name the domain (*.example.org)"));
    }
    rule.kind = Kind::kWildcard;
    rule.name = name;
    rule.text = with_port("*." + name, rule.port);
    return rule;
  }
  if (!valid_name(name)) {
    return std::unexpected(
        bad_entry(entry,
                  "not a domain name (letters, digits, hyphens and dots), *.DOMAIN, an address, "
                  "a CIDR or one of those with :PORT"));
  }
  rule.kind = Kind::kName;
  rule.name = name;
  rule.text = with_port(name, rule.port);
  return rule;
}

bool name_matches(const Rule& rule, std::string_view host) {
  if (rule.kind == Kind::kName) return host == rule.name;
  if (rule.kind == Kind::kWildcard) {
    return host.size() > rule.name.size() + 1 && host.ends_with(rule.name) &&
           host[host.size() - rule.name.size() - 1] == '.';
  }
  return false;
}

bool address_matches(const Rule& rule, const IpAddress& address) {
  if (rule.kind != Kind::kAddress) return false;
  if (address.within(rule.address, rule.prefix)) return true;
  // ::ffff:10.0.0.1 is 10.0.0.1 to the kernel; so it is to the list, both ways.
  if (const auto inner = address.embedded_v4()) return inner->within(rule.address, rule.prefix);
  if (const auto inner = rule.address.embedded_v4(); inner && rule.prefix >= 96) {
    return address.within(*inner, rule.prefix - 96);
  }
  return false;
}

// A name allow entry without a port allows 80 and 443; an address one, any port; a deny
// entry without a port, any port.
bool port_matches(const Rule& rule, std::uint16_t port, bool allowing) {
  if (rule.port) return *rule.port == port;
  if (allowing && rule.kind != Kind::kAddress) return port == 80 || port == 443;
  return true;
}

const Rule* find_name(const std::vector<Rule>& rules, std::string_view host, std::uint16_t port,
                      bool allowing) {
  for (const Rule& rule : rules) {
    if (name_matches(rule, host) && port_matches(rule, port, allowing)) return &rule;
  }
  return nullptr;
}

const Rule* find_address(const std::vector<Rule>& rules, const IpAddress& address,
                         std::uint16_t port, bool allowing) {
  for (const Rule& rule : rules) {
    if (address_matches(rule, address) && port_matches(rule, port, allowing)) return &rule;
  }
  return nullptr;
}

constexpr std::string_view kEmpty = "no network: the allow-list is empty";

}  // namespace

Result<NetPolicy> NetPolicy::make(const std::vector<std::string>& allow,
                                  const std::vector<std::string>& deny) {
  NetPolicy policy;
  for (const auto& [entries, into] :
       {std::pair{&allow, &policy.allow_}, std::pair{&deny, &policy.deny_}}) {
    for (const std::string& entry : *entries) {
      auto rule = parse_rule(entry);
      if (!rule) return std::unexpected(rule.error());
      if (std::none_of(into->begin(), into->end(),
                       [&](const Rule& r) { return r.text == rule->text; })) {
        into->push_back(std::move(*rule));
      }
    }
  }
  return policy;
}

Decision NetPolicy::check_target(std::string_view raw_host, std::uint16_t port) const {
  if (allow_.empty()) return {false, std::string(kEmpty)};
  const std::string host = normal_host(raw_host);
  const std::string target = format_endpoint(host, port);
  if (port == 0) return {false, target + ": port 0 is no port"};
  if (const auto address = IpAddress::parse(host)) {
    if (const Rule* denied = find_address(deny_, *address, port, false)) {
      return {false, target + " is denied by --deny-net " + denied->text};
    }
    if (const Rule* allowed = find_address(allow_, *address, port, true)) {
      return {true, "allowed by " + allowed->text};
    }
    return {false, target +
                       " is an address not on the allow-list (only an address or CIDR "
                       "entry allows an address; names on the list do not)"};
  }
  if (!valid_name(host)) return {false, "'" + std::string(raw_host) + "' is not a host name"};
  if (const Rule* denied = find_name(deny_, host, port, false)) {
    return {false, target + " is denied by --deny-net " + denied->text};
  }
  if (const Rule* allowed = find_name(allow_, host, port, true)) {
    return {true, "allowed by " + allowed->text};
  }
  for (const Rule& rule : allow_) {
    if (name_matches(rule, host) && !rule.port) {
      return {false, target + " is not on the allow-list (" + rule.text +
                         " allows ports 80 and 443; add " + host + ":" + std::to_string(port) +
                         " for another)"};
    }
  }
  return {false, target + " is not on the allow-list"};
}

Decision NetPolicy::check_address(std::string_view raw_host, std::uint16_t port,
                                  const IpAddress& address) const {
  Decision named = check_target(raw_host, port);
  if (!named.allowed) return named;
  const std::string host = normal_host(raw_host);
  const std::string where = IpAddress::parse(host) ? format_endpoint(host, port)
                                                   : host + " (" + address.to_string() + ")";
  if (const Rule* denied = find_address(deny_, address, port, false)) {
    return {false, where + " is denied by --deny-net " + denied->text};
  }
  const bool literal = IpAddress::parse(host).has_value();
  if (const Rule* by_address = find_address(allow_, address, port, true)) {
    if (literal) return {true, "allowed by " + by_address->text};
    return {true, named.why + "; its address " + address.to_string() + " by " + by_address->text};
  }
  if (literal) {  // a literal is allowed by an address entry or not at all
    return {false, format_endpoint(host, port) + " is an address not on the allow-list"};
  }
  const AddressClass kind = classify(address);
  if (kind != AddressClass::kPublic) {
    return {false, host + " resolved to " + address.to_string() + ", a " +
                       std::string(to_string(kind)) +
                       " address: names on the allow-list may not lead to loopback, private, "
                       "link-local, metadata or reserved addresses unless the address is "
                       "allowed as such"};
  }
  return named;
}

bool NetPolicy::allows_host(std::string_view raw_host) const {
  const std::string host = normal_host(raw_host);
  const std::optional<IpAddress> address = IpAddress::parse(host);
  return std::ranges::any_of(allow_, [&](const Rule& rule) {
    return address ? address_matches(rule, *address) : name_matches(rule, host);
  });
}

std::vector<std::string> NetPolicy::allow_entries() const {
  std::vector<std::string> out;
  out.reserve(allow_.size());
  for (const Rule& rule : allow_) out.push_back(rule.text);
  return out;
}

std::vector<std::string> NetPolicy::deny_entries() const {
  std::vector<std::string> out;
  out.reserve(deny_.size());
  for (const Rule& rule : deny_) out.push_back(rule.text);
  return out;
}

std::string NetPolicy::canonical() const {
  std::vector<std::string> allow = allow_entries();
  std::vector<std::string> deny = deny_entries();
  std::sort(allow.begin(), allow.end());
  std::sort(deny.begin(), deny.end());
  std::string out = "allow=";
  for (std::size_t i = 0; i < allow.size(); ++i) out += (i == 0 ? "" : ",") + allow[i];
  out += ";deny=";
  for (std::size_t i = 0; i < deny.size(); ++i) out += (i == 0 ? "" : ",") + deny[i];
  return out;
}

}  // namespace cordon::net
