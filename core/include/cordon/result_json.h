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

[[nodiscard]] nlohmann::json to_json(const Capability& capability);
// An array of to_json(Capability), in the order of capabilities.aspects.
[[nodiscard]] nlohmann::json to_json(const Capabilities& capabilities);

}  // namespace cordon
