#include "mcp/protocol.h"

#include <algorithm>

namespace cordon::cli::mcp {

std::string negotiate_version(std::string_view requested) {
  const bool known = std::ranges::find(kProtocolVersions, requested) != kProtocolVersions.end();
  return std::string(known ? requested : kProtocolVersions.front());
}

bool has_structured_content(std::string_view version) { return version >= "2025-06-18"; }

bool has_tool_annotations(std::string_view version) { return version >= "2025-03-26"; }

bool allows_batches(std::string_view version) { return version.empty() || version < "2025-06-18"; }

nlohmann::json tool_for_version(const nlohmann::json& tool, std::string_view version) {
  nlohmann::json out = tool;
  if (!has_structured_content(version)) out.erase("outputSchema");
  if (!has_tool_annotations(version)) out.erase("annotations");
  return out;
}

nlohmann::json initialize_result(std::string_view version, std::string_view server_version) {
  return nlohmann::json{
      {"protocolVersion", version},
      // logging: the progress of a first start's audit, for a client that asks for it.
      {"capabilities",
       {{"tools", {{"listChanged", false}}}, {"logging", nlohmann::json::object()}}},
      {"serverInfo", {{"name", "cordon"}, {"version", server_version}}},
      {"instructions",
       "run_code runs code in a fresh sandbox behind a timeout, or in a session's where "
       "session_open is offered; its description states what the sandbox stops on this "
       "host."},
  };
}

}  // namespace cordon::cli::mcp
