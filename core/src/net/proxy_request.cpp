#include "cordon/net/proxy_request.h"

#include <algorithm>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/write.hpp>
#include <cctype>
#include <charconv>
#include <iterator>
#include <sstream>

#include "cordon/text.h"

namespace cordon::net {

namespace http = boost::beast::http;

namespace {

ProxyHead refuse(int status, std::string why) {
  ProxyHead head;
  head.state = ProxyHead::State::kRefused;
  head.status = status;
  head.why = std::move(why);
  return head;
}

bool parse_port(std::string_view text, std::uint16_t* port) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || value == 0 ||
      value > 65535) {
    return false;
  }
  *port = static_cast<std::uint16_t>(value);
  return true;
}

// A host as the authority may carry it: a DNS name's characters or an IPv4 literal, or an
// IPv6 literal (brackets already removed). The policy validates names further; this only
// keeps characters that could mean something else to a resolver or a log out.
bool plausible_host(std::string_view host, bool bracketed) {
  if (host.empty() || host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(), [&](unsigned char c) {
    if (bracketed) return std::isxdigit(c) != 0 || c == ':' || c == '.';
    return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_';
  });
}

}  // namespace

bool split_authority(std::string_view authority, std::uint16_t default_port, std::string* host,
                     std::uint16_t* port) {
  std::string_view name;
  std::string_view port_text;
  bool bracketed = false;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return false;
    name = authority.substr(1, close - 1);
    bracketed = true;
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_text = rest.substr(1);
      if (port_text.empty()) return false;
    }
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      name = authority.substr(0, colon);
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return false;
    } else {
      name = authority;
    }
  }
  if (!plausible_host(name, bracketed)) return false;
  std::uint16_t value = default_port;
  if (!port_text.empty() && !parse_port(port_text, &value)) return false;
  if (value == 0) return false;
  *host = ascii_lower(name);
  *port = value;
  return true;
}

ProxyHead parse_proxy_head(std::string_view bytes) {
  http::request_parser<http::empty_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kMaxProxyHead));
  parser.eager(false);
  boost::beast::error_code ec;
  const std::size_t used = parser.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
  if (ec == http::error::need_more) {
    if (bytes.size() >= kMaxProxyHead) {
      return refuse(431, "the request head is larger than 16 KiB");
    }
    return {};
  }
  if (ec == http::error::header_limit) {
    return refuse(431, "the request head is larger than 16 KiB");
  }
  if (ec) return refuse(400, "malformed request: " + ec.message());
  if (!parser.is_header_done()) return {};

  auto& message = parser.get();
  if (message.version() != 11 && message.version() != 10) {
    return refuse(505, "only HTTP/1.0 and HTTP/1.1 requests are proxied");
  }
  const auto hosts = message.count(http::field::host);
  if (hosts > 1) return refuse(400, "the request has more than one Host header");
  const std::string_view target(message.target().data(), message.target().size());

  ProxyHead head;
  head.state = ProxyHead::State::kDone;
  head.consumed = used;
  ProxyRequest& request = head.request;
  request.method = std::string(message.method_string());

  if (message.method() == http::verb::connect) {
    request.connect = true;
    if (target.find('@') != std::string_view::npos ||
        !split_authority(target, 0, &request.host, &request.port) || request.port == 0) {
      return refuse(400, "CONNECT needs host:port, got '" + std::string(target) + "'");
    }
    return head;
  }

  // Plain HTTP: the absolute form a proxy-aware client sends.
  constexpr std::string_view kHttp = "http://";
  if (target.size() < kHttp.size() || ascii_lower(target.substr(0, kHttp.size())) != kHttp) {
    if (target.find("://") != std::string_view::npos) {
      return refuse(400,
                    "only http:// URLs are proxied as plain requests; other schemes (https) go "
                    "through CONNECT, as HTTPS_PROXY-aware clients do");
    }
    return refuse(400, "a request to the proxy names its target as an absolute http:// URL");
  }
  const std::string_view rest = target.substr(kHttp.size());
  const auto path_start = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, path_start);
  if (authority.find('@') != std::string_view::npos) {
    return refuse(400, "user info in the URL is not proxied");
  }
  if (!split_authority(authority, 80, &request.host, &request.port)) {
    return refuse(400, "the URL's host is not a host: '" + std::string(authority) + "'");
  }
  if (hosts == 1) {
    std::string host;
    std::uint16_t port = 0;
    const auto value = message[http::field::host];
    if (!split_authority(std::string_view(value.data(), value.size()), 80, &host, &port) ||
        host != request.host || port != request.port) {
      return refuse(400, "the Host header names another host than the request's URL");
    }
  }
  std::string origin(path_start == std::string_view::npos ? std::string_view("/")
                                                          : rest.substr(path_start));
  if (origin.front() != '/') origin.insert(origin.begin(), '/');
  if (const auto fragment = origin.find('#'); fragment != std::string::npos) {
    origin.resize(fragment);
  }
  // `target`, `rest` and `authority` view the message's storage: copy before changing it.
  const std::string host_field(authority);
  message.target(origin);
  // Proxy-* fields are for this proxy (credentials, keep-alive): none goes on to the target.
  for (auto it = message.begin(); it != message.end();) {
    const std::string name =
        ascii_lower(std::string_view(it->name_string().data(), it->name_string().size()));
    it = name.starts_with("proxy-") ? message.erase(it) : std::next(it);
  }
  message.set(http::field::connection, "close");
  if (hosts == 0) {
    message.set(http::field::host, host_field);
  }
  std::ostringstream out;
  out << message.base();
  request.upstream_head = out.str();
  return head;
}

}  // namespace cordon::net
