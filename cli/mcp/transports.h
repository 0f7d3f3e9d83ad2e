// The two ways `cordon mcp` talks to its clients. Both serve sessions of one Service until
// the client goes away (stdio: end of input) or `stop` is cancelled (SIGINT/SIGTERM), then
// cancel what is still running and return the process's exit status.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/error.h"

namespace cordon::cli::mcp {

class Service;

// Newline-delimited JSON-RPC on stdin/stdout. stdout carries protocol only; diagnostics go
// to stderr. A line longer than `max_line_bytes` is answered with a parse error and
// skipped, never buffered whole.
int serve_stdio(Service& service, const CancelToken& stop, std::size_t max_line_bytes);

// MCP Streamable HTTP (one endpoint, `/mcp`: POST, GET, DELETE).
struct HttpOptions {
  std::string host = "127.0.0.1";  // loopback unless asked otherwise
  int port = 0;                    // 0: any free port (the bound address is printed)
  // The bearer token every request must carry. Unset: a random one is generated and
  // written, mode 0600, to `token_path` (default $XDG_STATE_HOME/cordon/mcp-token).
  std::optional<std::string> token;
  std::filesystem::path token_path;
  // --token-file: reuse the token already in `token_path` (written there on first use);
  // otherwise a fresh one replaces the file at every start.
  bool reuse_token_file = false;
  // Origins accepted besides the server's own loopback ones (http://127.0.0.1:PORT,
  // http://localhost:PORT, http://[::1]:PORT); a request without Origin is accepted.
  std::vector<std::string> allowed_origins;
  std::chrono::seconds session_idle{30 * 60};
  std::size_t max_body_bytes = 4u << 20;
  // POSTs that may wait on tools/calls at once (--max-concurrent + the call queue): each
  // holds one HTTP worker thread while its SSE stream is open. 0: CPUs + 64.
  std::size_t max_open_calls = 0;
  // Protocol versions accepted in the MCP-Protocol-Version header besides the one the
  // session negotiated (empty: only that one).
  std::vector<std::string> protocol_versions;
  // How often an idle response stream gets a keep-alive comment: the write that fails is
  // how a vanished client is noticed (and its calls cancelled).
  std::chrono::milliseconds keepalive_interval{1000};
};
int serve_http(Service& service, const HttpOptions& options, const CancelToken& stop);

// Why `service` takes no MCP request yet, if it does not: what a refusal says, and how many
// seconds to wait before asking again when that will change by itself (HTTP answers 503
// with Retry-After; issue #40: a first start's audit). Implemented beside the Service
// (service.cpp; the HTTP transport's test has its own).
struct NotReady {
  std::string message;
  std::optional<int> retry_after_seconds;
};
[[nodiscard]] std::optional<NotReady> not_ready(const Service& service);

// `--http ADDR:PORT`: an IPv4 address, a bracketed IPv6 address or "localhost", then the
// port (0: any free one); a bare PORT means 127.0.0.1. Returns the host (without
// brackets) and the port.
[[nodiscard]] Result<std::pair<std::string, int>> parse_listen_address(std::string_view text);
// Whether binding `host` keeps the server reachable from this machine only.
[[nodiscard]] bool is_loopback_host(std::string_view host);

}  // namespace cordon::cli::mcp
