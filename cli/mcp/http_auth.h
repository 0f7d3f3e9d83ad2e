// The checks every request to `cordon mcp --http` passes before its body is read: the
// bearer token, and the Origin and Host headers against DNS rebinding (the MCP spec's
// security rules for Streamable HTTP). Pure functions of header values, so they are
// table-tested and fuzzed without a socket.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cordon::cli::mcp {

// Whether an Authorization header value is "Bearer <token>" (scheme case-insensitive)
// with exactly `token`. The comparison takes the same time wherever the first
// difference is, so the token cannot be guessed byte by byte from response times.
[[nodiscard]] bool bearer_token_matches(std::string_view authorization, std::string_view token);

// Which Origin and Host values a server bound to `host`:`port` accepts.
class OriginPolicy {
 public:
  // `extra_origins`: --allowed-origin values, as browsers send them ("https://app.example").
  OriginPolicy(std::string_view host, int port, const std::vector<std::string>& extra_origins);

  // An absent Origin (a non-browser client) is accepted; otherwise it must be one of the
  // server's own origins or an allowed one. Compared without regard to case.
  [[nodiscard]] bool origin_allowed(std::string_view origin) const;
  // A Host header naming another machine means a rebound DNS name (a browser page whose
  // name now resolves to this machine): refused when the server listens on loopback.
  [[nodiscard]] bool host_allowed(std::string_view host_header) const;

 private:
  std::vector<std::string> origins_;  // lower case, "scheme://host[:port]"
  std::vector<std::string> hosts_;    // lower case, "host:port"
  bool check_host_ = false;
};

}  // namespace cordon::cli::mcp
