// A minimal MCP client over stdio for bench-mcp: starts `cordon mcp` as a child with pipes,
// initializes, and times `tools/call` round trips the way an agent's client sees them
// (request line written -> response line read). Only what the benchmark needs: it is not
// a general client (the tests use the official SDK's).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cordon::bench {

class McpClient {
 public:
  // Starts `cordon_bin mcp <args...>` and completes initialize. Exits the benchmark on
  // failure: a broken candidate must not read as fast.
  McpClient(const std::string& cordon_bin, const std::vector<std::string>& args);
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;
  ~McpClient();  // closes stdin (the server ends its session) and reaps the server

  // Sends a run_code call; returns its request id. The arguments fill every field the
  // server's inputSchema lists (the unused optional ones as null).
  std::int64_t send_call(const std::string& code, const std::string& language);
  // Reads messages until the response to some call arrives; returns its id. Exits the
  // benchmark when the call did not end ok.
  std::int64_t wait_any();
  // One call, start to end.
  void call(const std::string& code, const std::string& language);

 private:
  void write_line(const nlohmann::json& message);
  nlohmann::json read_message();

  pid_t pid_ = -1;
  int to_server_ = -1;
  int from_server_ = -1;
  std::string buffer_;
  std::int64_t next_id_ = 1;
  std::vector<std::string> properties_;  // of run_code's inputSchema
};

}  // namespace cordon::bench
