#include "mcp_command.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "cli_error.h"
#include "cordon/units.h"
#include "mcp/service.h"
#include "mcp/tool_gate.h"
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

Result<mcp::HttpOptions> http_options(const McpOptions& options) {
  mcp::HttpOptions http;
  Result<std::pair<std::string, int>> listen = mcp::parse_listen_address(*options.http);
  if (!listen) return std::unexpected(listen.error());  // it names --http
  http.host = listen->first;
  http.port = listen->second;
  if (options.token) http.token = *options.token;
  if (options.token_file) {
    // The token already in the file, or one generated and written there on first use.
    http.token_path = *options.token_file;
    http.reuse_token_file = true;
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
  if (options.max_sessions) {
    Result<std::size_t> n = parse_number(options.max_sessions, "--max-sessions", /*zero_ok=*/true);
    if (!n) return report_failure(n.error().message, kJson);
    service_options.sessions.max_sessions = *n;
  }
  for (const auto& [text, flag, into] :
       {std::tuple(&options.sandbox_idle, "--sandbox-idle", &service_options.sessions.idle_timeout),
        std::tuple(&options.sandbox_max_age, "--sandbox-max-age",
                   &service_options.sessions.max_age)}) {
    if (!*text) continue;
    Result<std::chrono::milliseconds> d = parse_duration(**text);
    if (!d || d->count() <= 0) {
      return report_failure(
          std::string(flag) + ": " + (d ? std::string("must be above 0") : d.error().message),
          kJson);
    }
    *into = *d;
  }
  std::optional<mcp::HttpOptions> http;
  if (options.http) {
    Result<mcp::HttpOptions> parsed = http_options(options);
    if (!parsed) return report_failure(parsed.error().message, kJson);
    parsed->max_body_bytes = max_body;
    // Every call that may run or wait holds an HTTP stream open.
    parsed->max_open_calls =
        service_options.max_concurrent.value_or(std::max(1u, std::thread::hardware_concurrency())) +
        service_options.max_queue;
    http = std::move(*parsed);
  }

  CancelSource stop;
  const SignalCanceller canceller(stop);
  Result<std::unique_ptr<mcp::Service>> service = mcp::Service::create(service_options);
  if (!service) return report_failure(service.error().describe(), kJson);
  // When a first start's audit fails, the requests that waited are answered with the
  // reason, then the server stops: it has no tool to offer.
  (*service)->gate().after_settled([&stop](mcp::ToolGate::State state) {
    if (state == mcp::ToolGate::State::kFailed) stop.cancel();
  });
  const int status = http ? mcp::serve_http(**service, *http, stop.token())
                          : mcp::serve_stdio(**service, stop.token(), max_body);
  const bool failed = (*service)->gate().state() == mcp::ToolGate::State::kFailed;
  service->reset();  // waits for the workers, stores the history still queued
  if (const int signal = canceller.received(); signal != 0) return 128 + signal;
  return failed ? 1 : status;
}

}  // namespace cordon::cli
