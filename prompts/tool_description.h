// Versioned tool-description templates (prompts/<id>/v<N>.json, built in) and the
// append-only manifest of their content hashes (prompts/manifest.txt). A released
// version never changes, so a deployed agent's tool definition can be reproduced exactly:
// loading refuses a template whose bytes do not match the manifest.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"

namespace cordon::prompts {

struct ToolTemplate {
  std::string id;  // "run_code"
  int version = 0;
  std::string changelog;
  std::string name;         // the tool's name in every format
  std::string description;  // with {{placeholders}}
  nlohmann::json input_schema;
  // Optional: the MCP outputSchema and annotations of a tool whose result is not a run's
  // (the session tools); null: run_code's (result_json_schema(), the hints of the sandbox).
  nlohmann::json output_schema;
  nlohmann::json annotations;
  std::string path;  // "prompts/run_code/v1.json"
  std::string hash;  // "sha256:..." of the file's bytes
};

struct ManifestEntry {
  std::string id;
  int version = 0;
  std::string hash;
};

[[nodiscard]] Result<std::vector<ManifestEntry>> parse_manifest(std::string_view text);
[[nodiscard]] Result<ToolTemplate> parse_template(std::string_view path, std::string_view text);

// Every built-in template, each checked against the manifest (a file without a manifest
// line, or with another hash, is an error), sorted by id then version.
[[nodiscard]] Result<std::vector<ToolTemplate>> builtin_templates();
// The template `id` at `version`, or its latest version when unset.
[[nodiscard]] Result<ToolTemplate> find_template(std::string_view id, std::optional<int> version);

}  // namespace cordon::prompts
