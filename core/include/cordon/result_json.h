// JSON of results and capabilities (nlohmann/json). Field names are the public schema
// (README.md, "JSON result"). Byte strings are shown as UTF-8 with U+FFFD replacements
// and a *_lossy flag; artifacts carry base64.
#pragma once

#include <nlohmann/json.hpp>

#include "cordon/capabilities.h"
#include "cordon/result.h"

namespace cordon {

[[nodiscard]] nlohmann::json to_json(const RunResult& result);
[[nodiscard]] nlohmann::json to_json(const Capability& capability);
// An array of to_json(Capability), in the order of capabilities.aspects.
[[nodiscard]] nlohmann::json to_json(const Capabilities& capabilities);

}  // namespace cordon
