// Raw lines into an initialized MCP Session, as stdio or an HTTP body delivers them: no
// input may crash it, hang it or leak. The Service runs calls on a fake backend that
// answers at once (fuzzed code is never executed), with a sink that discards.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "cordon/backend.h"
#include "mcp/service.h"
#include "mcp/session.h"
#include "mcp/sink.h"

namespace {

using cordon::cli::mcp::Service;
using cordon::cli::mcp::Session;

class NoRunBackend final : public cordon::Backend {
 public:
  std::string_view name() const override { return "fuzz"; }
  std::string_view version() const override { return "0"; }
  cordon::Probe probe() const override { return {.available = true, .reason = {}}; }
  cordon::Capabilities capabilities(const cordon::Limits& /*limits*/) const override { return {}; }
  cordon::RunResult run(const cordon::RunRequest& request, const cordon::CancelToken& /*cancel*/,
                        cordon::RunObserver* /*observer*/) override {
    cordon::RunResult result;
    result.outcome = cordon::Outcome::kOk;
    result.exit_code = 0;
    result.stdout_data = request.code.substr(0, 16);
    return result;
  }
};

class DiscardSink final : public cordon::cli::mcp::Sink {
 public:
  bool send(const nlohmann::json& message) override {
    (void)message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return true;
  }
};

Service& service() {
  static NoRunBackend backend;
  static const std::unique_ptr<Service> instance = Service::for_backend(
      backend, "fuzz", nlohmann::json::parse(R"({"name":"run_code","description":"fuzz",
        "inputSchema":{"type":"object","additionalProperties":false,
          "required":["code","language","timeout"],
          "properties":{"code":{"type":"string","maxLength":1000},
                        "language":{"type":"string","enum":["sh","bash","python"]},
                        "timeout":{"type":["number","null"],"minimum":0.001,"maximum":5}}}})"),
      cordon::cli::ToolCallDefaults{}, /*workers=*/2, /*queue=*/8);
  return *instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto sink = std::make_shared<DiscardSink>();
  Session session(service(), "stdio");
  // Half the inputs go to a session that has been initialized (at an old version, so
  // batches are in play too); the others hit the before-initialize paths.
  if (size > 0 && (data[0] & 1) != 0) {
    (void)session.handle(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})",
        sink);
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    (void)session.handle(line, sink);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return 0;  // ~Session waits for the calls it queued
}
