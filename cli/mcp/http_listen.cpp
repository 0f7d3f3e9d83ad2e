// `--http ADDR:PORT` and whether an address keeps the server on this machine.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <string>

#include "mcp/transports.h"

namespace cordon::cli::mcp {
namespace {

bool is_ipv4(std::string_view host) {
  in_addr addr{};
  return ::inet_pton(AF_INET, std::string(host).c_str(), &addr) == 1;
}

bool is_ipv6(std::string_view host) {
  in6_addr addr{};
  return ::inet_pton(AF_INET6, std::string(host).c_str(), &addr) == 1;
}

Result<int> parse_port(std::string_view text, std::string_view whole) {
  int port = -1;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ec != std::errc() || ptr != end || port < 0 || port > 65535) {
    return fail(ErrorCode::kInvalidArgument,
                "--http " + std::string(whole) + ": the port must be a number from 0 to 65535");
  }
  return port;
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen_address(std::string_view text) {
  const std::string whole(text);
  if (!text.empty() && text.find(':') == std::string_view::npos) {
    // A bare port: loopback, the safe default.
    auto port = parse_port(text, whole);
    if (!port) return std::unexpected(port.error());
    return std::pair<std::string, int>{"127.0.0.1", *port};
  }
  std::string host;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return fail(ErrorCode::kInvalidArgument,
                  "--http " + whole + ": expected [IPv6]:PORT, e.g. [::1]:8080");
    }
    host = std::string(text.substr(1, close - 1));
    if (!is_ipv6(host)) {
      return fail(ErrorCode::kInvalidArgument, "--http " + whole + ": not an IPv6 address");
    }
    port_text = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "--http " + whole + ": put an IPv6 address in brackets, e.g. [::1]:8080");
    }
    // Only literal addresses and "localhost": a name resolved through DNS could bind an
    // interface nobody meant to open.
    if (host != "localhost" && !is_ipv4(host)) {
      return fail(ErrorCode::kInvalidArgument,
                  "--http " + whole +
                      ": the address must be an IPv4 address, [IPv6] or localhost, e.g. "
                      "127.0.0.1:8080");
    }
  }
  auto port = parse_port(port_text, whole);
  if (!port) return std::unexpected(port.error());
  return std::pair<std::string, int>{std::move(host), *port};
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) != 0;
  }
  return false;
}

}  // namespace cordon::cli::mcp
