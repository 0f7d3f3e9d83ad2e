// MCP's protocol versions and what each one has: the versions the locked official SDK
// (npm @modelcontextprotocol/sdk 1.32.x) supports, negotiated at initialize.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cordon::cli::mcp {

// Newest first; the first is what a client asking for an unknown version gets.
inline constexpr std::array<std::string_view, 5> kProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"};

// The version to answer initialize with: the requested one when supported, else the
// latest (the client then decides whether it can go on).
[[nodiscard]] std::string negotiate_version(std::string_view requested);

// Versions are dates, so they compare as text.
// structuredContent in results and outputSchema in tools/list: 2025-06-18 and later.
[[nodiscard]] bool has_structured_content(std::string_view version);
// Tool annotations: 2025-03-26 and later.
[[nodiscard]] bool has_tool_annotations(std::string_view version);
// JSON-RPC batches: before 2025-06-18 (which removed them). Before initialize, allowed.
[[nodiscard]] bool allows_batches(std::string_view version);

// The tools/list entry for `version`: `tool` (the MCP rendering) without the fields that
// version does not know.
[[nodiscard]] nlohmann::json tool_for_version(const nlohmann::json& tool, std::string_view version);

// The result of initialize.
[[nodiscard]] nlohmann::json initialize_result(std::string_view version,
                                               std::string_view server_version);

}  // namespace cordon::cli::mcp
