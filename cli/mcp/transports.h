// The two ways `cordon mcp` talks to its clients. Both serve sessions of one Service until
// the client goes away (stdio: end of input) or `stop` is cancelled (SIGINT/SIGTERM), then
// cancel what is still running and return the process's exit status.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/cancel.h"

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
  // Origins accepted besides the server's own loopback ones (http://127.0.0.1:PORT,
  // http://localhost:PORT, http://[::1]:PORT); a request without Origin is accepted.
  std::vector<std::string> allowed_origins;
  std::chrono::seconds session_idle{30 * 60};
  std::size_t max_body_bytes = 4u << 20;
};
int serve_http(Service& service, const HttpOptions& options, const CancelToken& stop);

}  // namespace cordon::cli::mcp
