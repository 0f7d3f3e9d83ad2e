// `cordon mcp`: serves the run_code tool to MCP clients, over stdio (default) or Streamable
// HTTP (--http ADDR:PORT), until the client goes away or a signal stops it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mcp/service.h"

namespace cordon::cli {

struct McpOptions {
  mcp::ServiceOptions service;      // backend, limits, audit gate, pool, workers, queue, history
  std::optional<std::string> http;  // --http ADDR:PORT
  std::optional<std::string> token_file;  // --token-file PATH
  std::optional<std::string> token;       // --token TOKEN
  std::vector<std::string> allowed_origins;
  std::optional<std::string> session_idle;    // DUR
  std::optional<std::string> max_body;        // SIZE: an HTTP body, or a stdio line
  std::optional<std::string> max_concurrent;  // N
  std::optional<std::string> max_queue;       // N
  // Sandbox sessions (issue #41). --session-idle is taken: it is the HTTP MCP sessions'.
  std::optional<std::string> max_sessions;     // N (0: no session tools)
  std::optional<std::string> sandbox_idle;     // DUR
  std::optional<std::string> sandbox_max_age;  // DUR
};

[[nodiscard]] int mcp_command(const McpOptions& options);

}  // namespace cordon::cli
