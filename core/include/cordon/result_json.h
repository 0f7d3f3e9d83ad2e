// JSON of results and capabilities (nlohmann/json). Field names are the public schema
// (README.md, "JSON result"). Byte strings are shown as UTF-8 with U+FFFD replacements
// and a *_lossy flag; artifacts carry base64.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cordon/capabilities.h"
#include "cordon/result.h"

namespace cordon {

[[nodiscard]] nlohmann::json to_json(const RunResult& result);
// The result to_json() wrote, read back: what a plugin's run returns across the C boundary
// (plugin_abi.h). Lossless for stdout and stderr when the JSON carries "stdout_base64" /
// "stderr_base64" (with_raw_output()); otherwise their text form is taken. Fails on a field
// of the wrong type or an unknown outcome, limit or aspect, naming it.
[[nodiscard]] Result<RunResult> result_from_json(const nlohmann::json& in);
// `out` (a to_json(result)) with "stdout_base64" / "stderr_base64" added for a stream
// whose text form is lossy, and "path_base64" for such an artifact path, so
// result_from_json() gets the exact bytes back.
void with_raw_output(const RunResult& result, nlohmann::json& out);
// A JSON Schema (draft 2020-12 subset) every to_json(RunResult) satisfies: the MCP tool's
// outputSchema, which clients validate structuredContent against. Exact where it binds
// (types, the outcome and limit names) and permissive elsewhere: only the fields every
// result has are required, and more properties may come in later schema versions.
[[nodiscard]] nlohmann::json result_json_schema();
// A figure (cpu_ms, max_rss_kb, memory_peak_kb, ...) of a Result JSON of any schema
// version, e.g. one stored in the history: std::nullopt when it was not measured. Schema 1
// wrote 0 for a max_rss_kb it had not measured (a process that ran never has an empty
// resident set), so that 0 reads as unmeasured; its other zeros may be real and are kept.
[[nodiscard]] std::optional<std::int64_t> result_figure(const nlohmann::json& result,
                                                        std::string_view field);

// A request's network access ({"allow", "deny", "max_bytes", "max_connections"}; null
// limits where unset), as a result's "network" and a plugin's request carry it, and back.
[[nodiscard]] nlohmann::json to_json(const NetworkAccess& access);
[[nodiscard]] Status read_network_access(const nlohmann::json& in, NetworkAccess& out);

[[nodiscard]] nlohmann::json to_json(const Capability& capability);
// An array of to_json(Capability), in the order of capabilities.aspects.
[[nodiscard]] nlohmann::json to_json(const Capabilities& capabilities);
// The array to_json(Capabilities) wrote, read back ("range" is read from min and max).
[[nodiscard]] Result<Capabilities> capabilities_from_json(const nlohmann::json& in);

}  // namespace cordon
