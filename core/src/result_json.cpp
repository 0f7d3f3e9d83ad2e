#include "cordon/result_json.h"

#include "cordon/json_number.h"
#include "cordon/limit_check.h"
#include "cordon/text.h"

namespace cordon {
namespace {

using nlohmann::json;

// nlohmann::json throws when it serialises invalid UTF-8, and every string here can
// carry bytes from the sandboxed code (file names, messages quoting paths). Each one
// goes through to_valid_utf8 so dump() can never fail.
json text(std::string_view bytes) { return to_valid_utf8(bytes); }

json optional_text(const std::optional<std::string>& value) {
  return value ? text(*value) : json(nullptr);
}

// A figure that was not measured is null, never 0 (result.h).
json figure(const std::optional<std::int64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json artifact_json(const Artifact& artifact) {
  return json{{"path", text(artifact.path)},
              {"size", artifact.size},
              {"sha256", text(artifact.sha256)},
              {"content_base64", base64_encode(artifact.content)}};
}

json enforced_json(const Enforced& enforced) {
  return json{{"aspect", to_string(enforced.aspect)},
              {"mechanism", text(enforced.mechanism)},
              {"value", optional_text(enforced.value)}};
}

}  // namespace

json to_json(const RunResult& result) {
  bool stdout_lossy = false;
  bool stderr_lossy = false;
  json out = json::object();
  out["schema_version"] = kResultSchemaVersion;
  out["outcome"] = to_string(result.outcome);
  out["limit"] = result.limit ? json(to_string(*result.limit)) : json(nullptr);
  out["ok"] = result.ok();
  out["stdout"] = to_valid_utf8(result.stdout_data, &stdout_lossy);
  out["stderr"] = to_valid_utf8(result.stderr_data, &stderr_lossy);
  out["stdout_lossy"] = stdout_lossy;
  out["stderr_lossy"] = stderr_lossy;
  out["stdout_truncated"] = result.stdout_truncated;
  out["stderr_truncated"] = result.stderr_truncated;
  out["exit_code"] = result.exit_code;
  out["signal"] = result.signal;
  out["timed_out"] = result.timed_out;
  out["oom_killed"] = result.oom_killed;
  out["wall_ms"] = result.wall_ms;
  out["setup_ms"] = result.setup_ms;
  out["cpu_ms"] = figure(result.cpu_ms);
  out["max_rss_kb"] = figure(result.max_rss_kb);
  out["memory_peak_kb"] = figure(result.memory_peak_kb);
  out["backend"] =
      json{{"name", text(result.backend.name)}, {"version", text(result.backend.version)}};
  out["policy"] =
      result.policy ? json{{"name", text(result.policy->name)}, {"hash", text(result.policy->hash)}}
                    : json(nullptr);
  json enforced = json::array();
  for (const auto& item : result.enforced) enforced.push_back(enforced_json(item));
  out["enforced"] = std::move(enforced);
  json artifacts = json::array();
  for (const auto& artifact : result.artifacts) artifacts.push_back(artifact_json(artifact));
  out["artifacts"] = std::move(artifacts);
  out["error"] = optional_text(result.error);
  out["tool_description"] = result.tool_description
                                ? json{{"id", text(result.tool_description->id)},
                                       {"version", result.tool_description->version}}
                                : json(nullptr);
  return out;
}

namespace {

json typed(std::string_view type) { return json{{"type", type}}; }
json nullable(std::string_view type) { return json{{"type", json::array({type, "null"})}}; }

json object_of(json properties, json required) {
  return json{
      {"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

}  // namespace

json result_json_schema() {
  json outcomes = json::array();
  for (const Outcome o : {Outcome::kOk, Outcome::kFailed, Outcome::kSignaled, Outcome::kTimedOut,
                          Outcome::kLimitExceeded, Outcome::kCancelled, Outcome::kSandboxError}) {
    outcomes.push_back(to_string(o));
  }
  json limits = json::array();
  for (const LimitKind l : {LimitKind::kMemory, LimitKind::kProcesses, LimitKind::kOutput,
                            LimitKind::kDisk, LimitKind::kCpu}) {
    limits.push_back(to_string(l));
  }
  limits.push_back(nullptr);
  json limit = nullable("string");
  limit["enum"] = std::move(limits);
  json outcome = typed("string");
  outcome["enum"] = std::move(outcomes);
  const json figure = nullable("integer");
  json properties{
      {"schema_version", typed("integer")},
      {"outcome", std::move(outcome)},
      {"limit", std::move(limit)},
      {"ok", typed("boolean")},
      {"stdout", typed("string")},
      {"stderr", typed("string")},
      {"stdout_lossy", typed("boolean")},
      {"stderr_lossy", typed("boolean")},
      {"stdout_truncated", typed("boolean")},
      {"stderr_truncated", typed("boolean")},
      {"exit_code", typed("integer")},
      {"signal", typed("integer")},
      {"timed_out", typed("boolean")},
      {"oom_killed", typed("boolean")},
      {"wall_ms", typed("integer")},
      {"setup_ms", typed("integer")},
      {"cpu_ms", figure},
      {"max_rss_kb", figure},
      {"memory_peak_kb", figure},
      {"backend",
       object_of({{"name", typed("string")}, {"version", typed("string")}}, {"name", "version"})},
      {"policy",
       object_of({{"name", typed("string")}, {"hash", typed("string")}}, {"name", "hash"})},
      {"enforced",
       {{"type", "array"},
        {"items", object_of({{"aspect", typed("string")},
                             {"mechanism", typed("string")},
                             {"value", nullable("string")}},
                            {"aspect", "mechanism"})}}},
      {"artifacts",
       {{"type", "array"},
        {"items", object_of({{"path", typed("string")},
                             {"size", typed("integer")},
                             {"sha256", typed("string")},
                             {"content_base64", typed("string")}},
                            {"path", "size"})}}},
      {"error", nullable("string")},
      {"tool_description",
       object_of({{"id", typed("string")}, {"version", typed("integer")}}, {"id", "version"})},
  };
  // Nullable objects: null, or an object of that shape.
  for (const char* name : {"policy", "tool_description"}) {
    properties[name]["type"] = json::array({"object", "null"});
  }
  return json{{"type", "object"},
              {"properties", std::move(properties)},
              {"required",
               {"schema_version", "outcome", "ok", "stdout", "stderr", "exit_code", "signal",
                "timed_out", "wall_ms", "backend"}}};
}

std::optional<std::int64_t> result_figure(const json& result, std::string_view field) {
  if (!result.is_object()) return std::nullopt;
  const auto found = result.find(field);
  if (found == result.end()) return std::nullopt;
  // Not get<int64_t>(): a float out of range (1e300) would be undefined behaviour.
  const std::optional<std::int64_t> read = json_integer<std::int64_t>(*found);
  if (!read) return std::nullopt;
  const std::int64_t value = *read;
  const auto version = result.find("schema_version");
  const bool schema1 =
      version == result.end() || !version->is_number_integer() || version->get<std::int64_t>() < 2;
  if (schema1 && value == 0 && field == "max_rss_kb") return std::nullopt;
  return value;
}

json to_json(const Capability& capability) {
  json out{{"aspect", to_string(capability.aspect)},
           {"enforcement", to_string(capability.enforcement)},
           {"mechanism", text(capability.mechanism)},
           {"value", optional_text(capability.value)},
           {"detail", text(capability.detail)}};
  // The values a request may ask for this limit (limit_check.h); absent for the others.
  if (capability.range) {
    out["range"] = {{"min", capability.range->min},
                    {"max", capability.range->max},
                    {"text", format_range(capability.aspect, *capability.range)}};
  }
  return out;
}

json to_json(const Capabilities& capabilities) {
  json out = json::array();
  for (const auto& capability : capabilities.aspects) out.push_back(to_json(capability));
  return out;
}

}  // namespace cordon
