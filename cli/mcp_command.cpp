#include "mcp_command.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli_error.h"
#include "cordon/units.h"
#include "mcp/transports.h"
#include "signal_cancel.h"

namespace cordon::cli {
namespace {

constexpr bool kJson = false;  // errors as text on stderr: stdout is the protocol

Result<std::size_t> parse_number(const std::optional<std::string>& text, std::string_view flag,
                                 bool zero_ok) {
  std::size_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || (value == 0 && !zero_ok)) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(flag) + ": '" + *text + "' is not a " +
                    (zero_ok ? "whole number" : "positive whole number"));
  }
  return value;
}

// "127.0.0.1:8080", "[::1]:0", "localhost:9000" -> host, port.
Status parse_listen(const std::string& text, mcp::HttpOptions& http) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return fail(ErrorCode::kInvalidArgument, "--http: '" + text + "' is not ADDR:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::optional<std::string> port_text = text.substr(colon + 1);
  Result<std::size_t> port = parse_number(port_text, "--http", /*zero_ok=*/true);
  if (!port || *port > 65535) {
    return fail(ErrorCode::kInvalidArgument, "--http: '" + text + "' has no port 0-65535");
  }
  http.host = std::move(host);
  http.port = static_cast<int>(*port);
  return {};
}

Result<mcp::HttpOptions> http_options(const McpOptions& options) {
  mcp::HttpOptions http;
  if (Status s = parse_listen(*options.http, http); !s) return std::unexpected(s.error());
  if (options.token) http.token = *options.token;
  if (options.token_file) {
    http.token_path = *options.token_file;
    // A token file that exists holds the token; one that does not is where the generated
    // token is written.
    if (!http.token) {
      if (std::ifstream in(*options.token_file); in) {
        std::string token;
        std::getline(in, token);
        while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
        if (token.empty()) {
          return fail(ErrorCode::kInvalidArgument,
                      "--token-file: " + *options.token_file + " holds no token");
        }
        http.token = std::move(token);
      }
    }
  }
  http.allowed_origins = options.allowed_origins;
  if (options.session_idle) {
    Result<std::chrono::milliseconds> idle = parse_duration(*options.session_idle);
    if (!idle) return fail(ErrorCode::kInvalidArgument, "--session-idle: " + idle.error().message);
    http.session_idle =
        std::max(std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(*idle));
  }
  return http;
}

}  // namespace

int mcp_command(const McpOptions& options) {
  mcp::ServiceOptions service_options = options.service;
  std::size_t max_body = 4u << 20;
  if (options.max_body) {
    Result<std::uint64_t> size = parse_size(*options.max_body);
    if (!size || *size == 0) {
      return report_failure(
          "--max-body: " + (size ? std::string("must be above 0") : size.error().message), kJson);
    }
    max_body = *size;
  }
  if (options.max_concurrent) {
    Result<std::size_t> n = parse_number(options.max_concurrent, "--max-concurrent", false);
    if (!n) return report_failure(n.error().message, kJson);
    service_options.max_concurrent = *n;
  }
  if (options.max_queue) {
    Result<std::size_t> n = parse_number(options.max_queue, "--max-queue", /*zero_ok=*/true);
    if (!n) return report_failure(n.error().message, kJson);
    service_options.max_queue = *n;
  }
  std::optional<mcp::HttpOptions> http;
  if (options.http) {
    Result<mcp::HttpOptions> parsed = http_options(options);
    if (!parsed) return report_failure(parsed.error().message, kJson);
    parsed->max_body_bytes = max_body;
    http = std::move(*parsed);
  }

  CancelSource stop;
  const SignalCanceller canceller(stop);
  Result<std::unique_ptr<mcp::Service>> service = mcp::Service::create(service_options);
  if (!service) return report_failure(service.error().describe(), kJson);
  const int status = http ? mcp::serve_http(**service, *http, stop.token())
                          : mcp::serve_stdio(**service, stop.token(), max_body);
  service->reset();  // waits for the workers, stores the history still queued
  if (const int signal = canceller.received(); signal != 0) return 128 + signal;
  return status;
}

}  // namespace cordon::cli
