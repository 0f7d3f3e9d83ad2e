// Tool-description templates (prompts/<id>/v<N>.json) and their manifest: the input is a
// path line, then the file's text. It is read as a manifest, as a template at that path,
// and a template that parses is rendered (with and without --unverified, for a backend
// that claims everything and one that claims nothing); its description also goes through
// fill_placeholders() alone. Properties: nothing throws; a rendered tool keeps the
// template's id, version and name; a text without "{{" fills to itself.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "audit/placeholders.h"
#include "fuzz_util.h"
#include "prompts/tool_description.h"
#include "prompts/tool_render.h"

namespace {

using namespace cordon;
using cordon::fuzz::require;

Capabilities with_level(Enforcement level) {
  Capabilities caps;
  for (const Aspect aspect : kAllAspects) {
    caps.aspects.push_back(capability(aspect, level, "fuzz", "1", ""));
  }
  return caps;
}

void render(const prompts::ToolTemplate& tool) {
  for (const Enforcement level : {Enforcement::kNone, Enforcement::kEnforced}) {
    for (const bool unverified : {false, true}) {
      const prompts::RenderContext ctx{.backend_name = "fuzz",
                                       .capabilities = with_level(level),
                                       .timeout = std::chrono::milliseconds(1500),
                                       .languages = {Language::kBash},
                                       .report = nullptr,
                                       .unverified = unverified};
      const auto rendered = prompts::render_tool(tool, ctx);
      if (!rendered) {
        require(!rendered.error().message.empty());
        continue;
      }
      require(rendered->id == tool.id && rendered->version == tool.version &&
              rendered->name == tool.name);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)prompts::parse_manifest(bytes);
  const std::size_t newline = bytes.find('\n');
  const std::string_view path = bytes.substr(0, newline);
  const std::string_view text =
      newline == std::string_view::npos ? std::string_view() : bytes.substr(newline + 1);
  const std::map<std::string, std::string> values{{"languages", "python"}, {"timeout", "5 s"}};
  const std::string as_text(text);
  const Result<std::string> filled = audit::fill_placeholders(as_text, values);
  if (as_text.find("{{") == std::string::npos) require(filled.has_value() && *filled == as_text);
  const Result<prompts::ToolTemplate> tool = prompts::parse_template(path, text);
  if (!tool) {
    require(!tool.error().message.empty());
    return 0;
  }
  render(*tool);
  return 0;
}
