// Bytes as a model's run_code arguments: parsed as JSON, checked against the real
// rendered schema of the latest template (cli/tool_call.h); and the same bytes as the
// output, file names and error of a run, turned into the tool result. Neither may crash,
// throw or break its promises (a timeout within (0, max], a result JSON that its own
// outputSchema accepts, a reply that serialises).
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/result_json.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"
#include "schema_check.h"
#include "tool_call.h"

namespace {

using nlohmann::json;
using namespace cordon;

void require(bool ok) {
  if (!ok) std::abort();  // the standalone main and libFuzzer both report an abort
}

const json& schema() {
  static const json s = [] {
    const auto tool = prompts::find_template("run_code", std::nullopt);
    require(tool.has_value());
    const prompts::RenderContext ctx{
        .backend_name = "fuzz",
        .capabilities = {},
        .timeout = std::chrono::seconds(10),
        .languages = {Language::kPython, Language::kBash, Language::kSh},
        .report = nullptr,
        .unverified = true};
    auto rendered = prompts::render_tool(*tool, ctx);
    require(rendered.has_value());
    return rendered->input_schema;
  }();
  return s;
}

void fuzz_arguments(const std::string& bytes) {
  cli::ToolCallDefaults defaults;
  defaults.max_timeout = std::chrono::seconds(10);
  defaults.max_input_bytes = 4096;
  json arguments = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (arguments.is_discarded()) arguments = json(bytes);  // not JSON: a string argument
  const Result<RunRequest> request = cli::request_from_tool_call(arguments, schema(), defaults);
  if (!request) {
    require(!request.error().message.empty());
    (void)cli::tool_error_result(request.error().message).dump();
    return;
  }
  require(request->timeout.count() > 0 && request->timeout <= defaults.max_timeout);
  require(request->code.size() <= kMaxCodeBytes);
  std::uint64_t total = 0;
  for (const auto& [name, content] : request->input_files) total += content.size();
  require(total <= defaults.max_input_bytes);
  require(validate(*request).has_value());
}

void fuzz_result(const std::string& bytes) {
  RunResult r;
  const auto pick = bytes.empty() ? 0u : static_cast<unsigned char>(bytes[0]);
  r.outcome = static_cast<Outcome>(pick % 7);
  if (r.outcome == Outcome::kLimitExceeded) r.limit = static_cast<LimitKind>(pick / 7 % 5);
  r.exit_code = static_cast<int>(pick) - 128;
  r.signal = pick % 65;
  r.stdout_data = bytes;
  r.stderr_data = bytes.substr(bytes.size() / 2);
  r.stdout_truncated = (pick & 1) != 0;
  r.error = bytes;
  r.enforced.push_back({Aspect::kMemory, bytes, bytes});
  r.artifacts.push_back(
      Artifact{.path = bytes, .size = bytes.size(), .sha256 = "", .content = bytes});
  r.artifacts.push_back(
      Artifact{.path = "out/" + bytes.substr(0, 8), .size = 0, .sha256 = "", .content = ""});
  const json out = cli::tool_result(r, /*structured=*/true);
  (void)out.dump();
  require(out["isError"].get<bool>() == !r.ok());
  require(cli::check_schema(out["structuredContent"], result_json_schema()).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz_arguments(bytes);
  fuzz_result(bytes);
  return 0;
}
