#include "prompts/tool_formats.h"

#include <algorithm>

#include "cordon/result_json.h"

namespace cordon::prompts {

using nlohmann::json;

json strict_schema(const json& schema) {
  if (!schema.is_object()) return schema;
  json out = schema;
  if (const auto items = out.find("items"); items != out.end()) *items = strict_schema(*items);
  const auto properties = out.find("properties");
  if (properties == out.end() || !properties->is_object()) return out;
  const json required = out.value("required", json::array());
  json all = required;  // in its order, the others after it
  for (const auto& [name, property] : properties->items()) {
    property = strict_schema(property);
    if (!property.is_object()) continue;
    // Strict mode refuses "default"; the property's description states it.
    property.erase("default");
    if (std::ranges::find(required, json(name)) != required.end()) continue;
    // Optional elsewhere: here given, as null.
    all.push_back(name);
    if (const auto type = property.find("type"); type != property.end()) {
      if (type->is_string()) *type = json::array({*type});
      if (type->is_array() && std::ranges::find(*type, json("null")) == type->end()) {
        type->push_back("null");
      }
    }
    if (const auto values = property.find("enum");
        values != property.end() && values->is_array() &&
        std::ranges::find(*values, json()) == values->end()) {
      values->push_back(nullptr);
    }
  }
  out["required"] = std::move(all);
  return out;
}

json mcp_tool(const RenderedTool& tool) {
  // The hints MCP defines, each stated as it holds for this backend: the code can do
  // anything inside the sandbox, so nothing is read-only or idempotent; it changes the
  // host only where the host's files are not protected, and reaches the outside world
  // unless the network is closed.
  const json annotations{{"title", "Run code"},
                         {"readOnlyHint", false},
                         {"destructiveHint", !tool.host_files_protected},
                         {"idempotentHint", false},
                         {"openWorldHint", !tool.network_closed}};
  // A tool whose result is no run's (the session tools) brings its own from its template.
  return json{
      {"name", tool.name},
      {"description", tool.description},
      {"inputSchema", tool.input_schema},
      {"outputSchema", tool.output_schema.is_null() ? result_json_schema() : tool.output_schema},
      {"annotations", tool.annotations.is_null() ? annotations : tool.annotations}};
}

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
             {"parameters", strict_schema(tool.input_schema)},
             {"strict", true}}}};
  } else if (format == "openai-responses") {
    out = {{"type", "function"},
           {"name", tool.name},
           {"description", tool.description},
           {"parameters", strict_schema(tool.input_schema)},
           {"strict", true}};
  } else if (format == "anthropic") {
    out = {{"name", tool.name},
           {"description", tool.description},
           {"input_schema", tool.input_schema}};
  } else if (format == "mcp") {
    out = mcp_tool(tool);
  } else {
    std::string known;
    for (const std::string_view f : kToolFormats)
      known += (known.empty() ? "" : ", ") + std::string(f);
    return fail(ErrorCode::kInvalidArgument,
                "unknown format '" + std::string(format) + "' (one of " + known + ")");
  }
  return out.dump(2, ' ', /*ensure_ascii=*/false) + "\n";
}

}  // namespace cordon::prompts
