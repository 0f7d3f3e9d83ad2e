// A rendered tool in each ecosystem's exact shape:
//   text              plain system-prompt text
//   openai            Chat Completions: {type: function, function: {name, description,
//                     parameters, strict: true}}, parameters in strict_schema()'s shape
//   openai-responses  Responses API: {type: function, name, description, parameters, strict},
//                     the same
//   anthropic         {name, description, input_schema}: the template's own shape, where a
//                     model may leave an optional property out
//   mcp               MCP tools/list entry: {name, description, inputSchema, outputSchema,
//                     annotations}: mcp_tool(), what `cordon mcp` serves
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "prompts/tool_render.h"

namespace cordon::prompts {

inline constexpr std::array<std::string_view, 5> kToolFormats = {
    "text", "openai", "openai-responses", "anthropic", "mcp"};

// `schema` in the shape OpenAI's strict function calling needs: every property of every
// object required, those optional in `schema` accepting null instead (JSON null added to
// their type, and to their enum where they have one), and no "default" keyword (strict mode
// refuses it; the description states the default). A schema that already requires every
// property and says no default (run_code v1 to v3) comes back as it is.
[[nodiscard]] nlohmann::json strict_schema(const nlohmann::json& schema);

// The tool as an MCP tools/list entry: name, description, inputSchema, outputSchema (the
// Result JSON's schema, result_json_schema(): structuredContent satisfies it) and the
// annotations that are true for it (openWorldHint false only where the network is closed).
// `cordon prompt --format mcp` prints exactly this; `cordon mcp` serves it.
[[nodiscard]] nlohmann::json mcp_tool(const RenderedTool& tool);

// The tool in `format`; JSON formats are pretty-printed. Fails on an unknown format.
[[nodiscard]] Result<std::string> format_tool(const RenderedTool& tool, std::string_view format);

}  // namespace cordon::prompts
