// A rendered tool in each ecosystem's exact shape:
//   text              plain system-prompt text
//   openai            Chat Completions: {type: function, function: {name, description,
//                     parameters, strict: true}} (strict: every property required)
//   openai-responses  Responses API: {type: function, name, description, parameters, strict}
//   anthropic         {name, description, input_schema}
//   mcp               MCP tools/list entry: {name, description, inputSchema}
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "audit/tool_render.h"

namespace cordon::audit {

inline constexpr std::array<std::string_view, 5> kToolFormats = {
    "text", "openai", "openai-responses", "anthropic", "mcp"};

// The tool in `format`; JSON formats are pretty-printed. Fails on an unknown format.
[[nodiscard]] Result<std::string> format_tool(const RenderedTool& tool, std::string_view format);

}  // namespace cordon::audit
