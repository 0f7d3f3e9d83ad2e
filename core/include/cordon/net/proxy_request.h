// The request a client in the sandbox sends the egress proxy (issue #16), read with Boost.Beast's
// HTTP parser: `CONNECT host:port` (HTTPS and any TLS, never intercepted) or a plain-HTTP
// request in absolute form (`GET http://host/path`). What it yields is the target the policy
// judges and, for plain HTTP, the head to send that target. Everything that could make the
// proxy judge one host and reach another is refused here, with the status and words the code
// gets back: two Host headers, a Host header naming another host than the request line, user
// info in the authority, a scheme other than http, a head over kMaxProxyHead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::net {

inline constexpr std::size_t kMaxProxyHead = 16 * 1024;

struct ProxyRequest {
  bool connect = false;  // CONNECT: a tunnel; else one plain-HTTP request
  std::string method;
  std::string host;  // lower case; an IPv6 literal without its brackets
  std::uint16_t port = 0;
  // Plain HTTP only: the head to send the target (origin-form target, Proxy-* fields removed,
  // `Connection: close`, so each client connection carries requests to this target only).
  std::string upstream_head;
};

struct ProxyHead {
  enum class State { kNeedMore, kDone, kRefused };
  State state = State::kNeedMore;
  ProxyRequest request;      // kDone
  std::size_t consumed = 0;  // kDone: bytes of the input that were the head
  int status = 0;            // kRefused: the HTTP status to answer with
  std::string why;           // kRefused: why, in words for the code's author
};

// Reads a request head from the bytes a connection sent so far (call again with more bytes
// while it answers kNeedMore).
ProxyHead parse_proxy_head(std::string_view bytes);

// "host:port" / "[v6]:port" / "host" (with `default_port`) into host and port; false if it is
// none of those. Hosts are lower-cased; brackets are removed.
bool split_authority(std::string_view authority, std::uint16_t default_port, std::string* host,
                     std::uint16_t* port);

}  // namespace cordon::net
