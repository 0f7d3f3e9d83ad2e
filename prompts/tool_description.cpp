#include "prompts/tool_description.h"

#include <algorithm>
#include <sstream>

#include "cordon/json_number.h"
#include "cordon/sha256.h"
#include "prompts/embedded.h"

namespace cordon::prompts {

using nlohmann::json;

Result<std::vector<ManifestEntry>> parse_manifest(std::string_view text) {
  std::vector<ManifestEntry> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with('#')) continue;
    std::istringstream fields(line);
    ManifestEntry e;
    if (!(fields >> e.id >> e.version >> e.hash) || !e.hash.starts_with("sha256:")) {
      return fail(ErrorCode::kInvalidArgument, "manifest: bad line '" + line + "'");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<ToolTemplate> parse_template(std::string_view path, std::string_view text) {
  ToolTemplate t;
  t.path = path;
  t.hash = "sha256:" + sha256_hex(text);
  try {
    const json j = json::parse(text);
    t.id = j.at("id").get<std::string>();
    const auto version = json_integer_member<int>(j, "version");
    if (!version)
      return fail(ErrorCode::kInvalidArgument, std::string(path) + ": " + version.error().message);
    t.version = *version;
    t.changelog = j.at("changelog").get<std::string>();
    t.name = j.at("name").get<std::string>();
    t.description = j.at("description").get<std::string>();
    t.input_schema = j.at("input_schema");
    t.output_schema = j.value("output_schema", json());
    t.annotations = j.value("annotations", json());
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInvalidArgument, std::string(path) + ": " + e.what());
  }
  const std::string want = "prompts/" + t.id + "/v" + std::to_string(t.version) + ".json";
  if (!path.ends_with(want)) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(path) + ": id and version say it should be " + want);
  }
  return t;
}

Result<std::vector<ToolTemplate>> builtin_templates() {
  std::vector<ManifestEntry> manifest;
  std::vector<ToolTemplate> out;
  for (const EmbeddedFile& file : embedded_prompt_files()) {
    if (file.path.ends_with("manifest.txt")) {
      Result<std::vector<ManifestEntry>> m = parse_manifest(file.text);
      if (!m) return std::unexpected(m.error());
      manifest = std::move(*m);
      continue;
    }
    Result<ToolTemplate> t = parse_template(file.path, file.text);
    if (!t) return std::unexpected(t.error());
    out.push_back(std::move(*t));
  }
  for (const ToolTemplate& t : out) {
    const auto it = std::ranges::find_if(
        manifest, [&](const ManifestEntry& e) { return e.id == t.id && e.version == t.version; });
    if (it == manifest.end()) {
      return fail(ErrorCode::kInvalidArgument, t.path + " is not in prompts/manifest.txt");
    }
    if (it->hash != t.hash) {
      return fail(ErrorCode::kInvalidArgument,
                  t.path + " changed after release (manifest " + it->hash + ", file " + t.hash +
                      "): released versions never change; add a new version instead");
    }
  }
  std::ranges::sort(out, [](const ToolTemplate& a, const ToolTemplate& b) {
    return a.id != b.id ? a.id < b.id : a.version < b.version;
  });
  return out;
}

Result<ToolTemplate> find_template(std::string_view id, std::optional<int> version) {
  Result<std::vector<ToolTemplate>> all = builtin_templates();
  if (!all) return std::unexpected(all.error());
  std::optional<ToolTemplate> found;
  for (ToolTemplate& t : *all) {
    if (t.id == id && (!version || t.version == *version)) found = std::move(t);
  }
  if (!found) {
    return fail(ErrorCode::kNotFound,
                "no tool description " + std::string(id) +
                    (version ? " version " + std::to_string(*version) : std::string()));
  }
  return std::move(*found);
}

}  // namespace cordon::prompts
