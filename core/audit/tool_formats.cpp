#include "audit/tool_formats.h"

#include <algorithm>

namespace cordon::audit {

using nlohmann::json;

Result<std::string> format_tool(const RenderedTool& tool, std::string_view format) {
  json out;
  if (format == "text") {
    return "You can call the tool `" + tool.name + "`. " + tool.description +
           "\nIts input is a JSON object matching this schema:\n" + tool.input_schema.dump(2) +
           "\n";
  }
  if (format == "openai") {
    out = {{"type", "function"},
           {"function",
            {{"name", tool.name},
             {"description", tool.description},
             {"parameters", tool.input_schema},
             {"strict", true}}}};
  } else if (format == "openai-responses") {
    out = {{"type", "function"},
           {"name", tool.name},
           {"description", tool.description},
           {"parameters", tool.input_schema},
           {"strict", true}};
  } else if (format == "anthropic") {
    out = {{"name", tool.name},
           {"description", tool.description},
           {"input_schema", tool.input_schema}};
  } else if (format == "mcp") {
    out = {
        {"name", tool.name}, {"description", tool.description}, {"inputSchema", tool.input_schema}};
  } else {
    std::string known;
    for (const std::string_view f : kToolFormats)
      known += (known.empty() ? "" : ", ") + std::string(f);
    return fail(ErrorCode::kInvalidArgument,
                "unknown format '" + std::string(format) + "' (one of " + known + ")");
  }
  return out.dump(2, ' ', /*ensure_ascii=*/false) + "\n";
}

}  // namespace cordon::audit
