#include "cordon/result_json.h"

#include "cordon/claims.h"
#include "cordon/json_number.h"
#include "cordon/limit_check.h"
#include "cordon/text.h"
#include "json_fields.h"

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

json connection_json(const NetConnection& c) {
  return json{{"method", text(c.method)},   {"host", text(c.host)},  {"port", c.port},
              {"address", text(c.address)}, {"allowed", c.allowed},  {"why", text(c.why)},
              {"bytes_out", c.bytes_out},   {"bytes_in", c.bytes_in}};
}

json network_json(const NetworkReport& report) {
  json out = to_json(report.access);
  json connections = json::array();
  for (const NetConnection& c : report.connections) connections.push_back(connection_json(c));
  out["connections"] = std::move(connections);
  out["dropped"] = report.dropped;
  out["limit_reached"] = optional_text(report.limit_reached);
  return out;
}

}  // namespace

json to_json(const NetworkAccess& access) {
  json allow = json::array();
  for (const auto& entry : access.allow) allow.push_back(text(entry));
  json deny = json::array();
  for (const auto& entry : access.deny) deny.push_back(text(entry));
  return json{
      {"allow", std::move(allow)},
      {"deny", std::move(deny)},
      {"max_bytes", access.max_bytes ? json(*access.max_bytes) : json(nullptr)},
      {"max_connections", access.max_connections ? json(*access.max_connections) : json(nullptr)}};
}

Status read_network_access(const json& in, NetworkAccess& out) {
  if (!in.is_object()) return std::unexpected(json_fields::unexpected_value("network", in));
  return json_fields::first_failure(
      {json_fields::read(in, "allow", out.allow), json_fields::read(in, "deny", out.deny),
       json_fields::read(in, "max_bytes", out.max_bytes),
       json_fields::read(in, "max_connections", out.max_connections)});
}

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
  if (!result.backend.variant.empty()) out["backend"]["variant"] = text(result.backend.variant);
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
  out["network"] = result.network ? network_json(*result.network) : json(nullptr);
  out["environment"] = result.environment ? json{{"name", text(result.environment->name)},
                                                 {"digest", text(result.environment->digest)}}
                                          : json(nullptr);
  out["value"] = optional_text(result.value);
  out["state_lost"] = result.state_lost;
  out["session"] = result.session
                       ? json{{"id", text(result.session->id)}, {"call", result.session->call}}
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
  for (const Outcome o : kAllOutcomes) {
    outcomes.push_back(to_string(o));
  }
  json limits = json::array();
  for (const LimitKind l : kAllLimitKinds) {
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
       object_of(
           {{"name", typed("string")}, {"version", typed("string")}, {"variant", typed("string")}},
           {"name", "version"})},
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
      {"network", object_of({{"allow", {{"type", "array"}, {"items", typed("string")}}},
                             {"deny", {{"type", "array"}, {"items", typed("string")}}},
                             {"max_bytes", nullable("integer")},
                             {"max_connections", nullable("integer")},
                             {"connections",
                              {{"type", "array"},
                               {"items", object_of({{"method", typed("string")},
                                                    {"host", typed("string")},
                                                    {"port", typed("integer")},
                                                    {"address", typed("string")},
                                                    {"allowed", typed("boolean")},
                                                    {"why", typed("string")},
                                                    {"bytes_out", typed("integer")},
                                                    {"bytes_in", typed("integer")}},
                                                   {"host", "port", "allowed", "why"})}}},
                             {"dropped", typed("integer")},
                             {"limit_reached", nullable("string")}},
                            {"allow", "connections"})},
      {"environment",
       object_of({{"name", typed("string")}, {"digest", typed("string")}}, {"name", "digest"})},
  };
  // Not here: schema 6's `value`, `state_lost` and `session` (a call in a session). This
  // schema is every pinned run_code version's outputSchema, whose rendering never changes;
  // it does not forbid other members. The session tools' descriptions state them.
  // Nullable objects: null, or an object of that shape.
  for (const char* name : {"policy", "tool_description", "network", "environment"}) {
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
  // What the words were rendered from (claims.h), for a declared claim.
  if (!capability.by.kind.empty() || capability.quantity || !capability.conditions.empty()) {
    out["claim"] = claim_json(capability);
  }
  return out;
}

json to_json(const Capabilities& capabilities) {
  json out = json::array();
  for (const auto& capability : capabilities.aspects) out.push_back(to_json(capability));
  return out;
}

namespace {

using json_fields::enum_named;
using json_fields::first_failure;
using json_fields::member;
using json_fields::read;
using json_fields::unexpected_value;

// The raw bytes of a stream or path: "<name>_base64" when present, else the text form.
Status read_output(const json& object, const std::string& name, std::string& out) {
  if (Status s = read(object, name, out); !s) return s;
  const json* raw = member(object, name + "_base64");
  if (raw == nullptr) return {};
  std::optional<std::string> bytes =
      raw->is_string() ? base64_decode(raw->get<std::string>()) : std::nullopt;
  if (!bytes) return std::unexpected(unexpected_value(name + "_base64", *raw));
  out = std::move(*bytes);
  return {};
}

Result<Aspect> aspect_of(const json& object) {
  const json* name = member(object, "aspect");
  const auto aspect = name != nullptr && name->is_string()
                          ? enum_named(kAllAspects, name->get<std::string>())
                          : std::nullopt;
  if (!aspect) return std::unexpected(unexpected_value("aspect", name ? *name : object));
  return *aspect;
}

// The members of the array `key` (none when it is absent); an error when it is no array.
Result<std::vector<json>> items(const json& object, std::string_view key) {
  const json* list = member(object, key);
  if (list == nullptr) return std::vector<json>{};
  if (!list->is_array()) return std::unexpected(unexpected_value(key, *list));
  return list->get<std::vector<json>>();
}

}  // namespace

void with_raw_output(const RunResult& result, json& out) {
  if (out.value("stdout_lossy", false)) out["stdout_base64"] = base64_encode(result.stdout_data);
  if (out.value("stderr_lossy", false)) out["stderr_base64"] = base64_encode(result.stderr_data);
  // An artifact's path names a file the caller writes: it must arrive as the code wrote it.
  for (std::size_t i = 0; i < result.artifacts.size(); ++i) {
    bool lossy = false;
    (void)to_valid_utf8(result.artifacts[i].path, &lossy);
    if (lossy) out["artifacts"][i]["path_base64"] = base64_encode(result.artifacts[i].path);
  }
}

namespace {

// The optional object `key` of two members (policy, tool_description, environment): unset
// when absent or not an object, else both read, failing on a member of the wrong type.
template <typename T, typename A, typename B>
Status read_pair(const json& in, std::string_view key, std::string_view a_key, A T::* a,
                 std::string_view b_key, B T::* b, std::optional<T>& out) {
  const json* object = member(in, key);
  if (object == nullptr || !object->is_object()) return {};
  T value{};
  if (Status s = first_failure({read(*object, a_key, value.*a), read(*object, b_key, value.*b)});
      !s) {
    return s;
  }
  out = std::move(value);
  return {};
}

}  // namespace

Result<RunResult> result_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "a result is a JSON object");
  RunResult r;
  std::string outcome;
  if (auto s = read(in, "outcome", outcome); !s) return std::unexpected(s.error());
  const auto named = enum_named(kAllOutcomes, outcome);
  if (!named) return std::unexpected(unexpected_value("outcome", in.value("outcome", json())));
  r.outcome = *named;
  if (const auto limit = in.find("limit"); limit != in.end() && !limit->is_null()) {
    const auto kind =
        limit->is_string() ? enum_named(kAllLimitKinds, limit->get<std::string>()) : std::nullopt;
    if (!kind) return std::unexpected(unexpected_value("limit", *limit));
    r.limit = kind;
  }
  if (Status s = first_failure(
          {read_output(in, "stdout", r.stdout_data), read_output(in, "stderr", r.stderr_data),
           read(in, "stdout_truncated", r.stdout_truncated),
           read(in, "stderr_truncated", r.stderr_truncated), read(in, "exit_code", r.exit_code),
           read(in, "signal", r.signal), read(in, "timed_out", r.timed_out),
           read(in, "oom_killed", r.oom_killed), read(in, "wall_ms", r.wall_ms),
           read(in, "setup_ms", r.setup_ms), read(in, "cpu_ms", r.cpu_ms),
           read(in, "max_rss_kb", r.max_rss_kb), read(in, "memory_peak_kb", r.memory_peak_kb),
           read(in, "error", r.error)});
      !s) {
    return std::unexpected(s.error());
  }
  if (const auto backend = in.find("backend"); backend != in.end() && backend->is_object()) {
    if (Status s = first_failure({read(*backend, "name", r.backend.name),
                                  read(*backend, "version", r.backend.version),
                                  read(*backend, "variant", r.backend.variant)});
        !s) {
      return std::unexpected(s.error());
    }
  }
  if (Status s = first_failure(
          {read_pair(in, "policy", "name", &PolicyId::name, "hash", &PolicyId::hash, r.policy),
           read_pair(in, "tool_description", "id", &ToolDescriptionRef::id, "version",
                     &ToolDescriptionRef::version, r.tool_description),
           read_pair(in, "environment", "name", &EnvironmentRef::name, "digest",
                     &EnvironmentRef::digest, r.environment),
           read_pair(in, "session", "id", &SessionCallRef::id, "call", &SessionCallRef::call,
                     r.session),
           read(in, "value", r.value), read(in, "state_lost", r.state_lost)});
      !s) {
    return std::unexpected(s.error());
  }
  const Result<std::vector<json>> enforced_items = items(in, "enforced");
  const Result<std::vector<json>> artifact_items = items(in, "artifacts");
  if (!enforced_items) return std::unexpected(enforced_items.error());
  if (!artifact_items) return std::unexpected(artifact_items.error());
  for (const json& item : *enforced_items) {
    Enforced enforced;
    auto aspect = aspect_of(item);
    if (!aspect) return std::unexpected(aspect.error());
    enforced.aspect = *aspect;
    if (Status s = first_failure(
            {read(item, "mechanism", enforced.mechanism), read(item, "value", enforced.value)});
        !s) {
      return std::unexpected(s.error());
    }
    r.enforced.push_back(std::move(enforced));
  }
  for (const json& item : *artifact_items) {
    Artifact artifact;
    std::string content;
    if (Status s = first_failure(
            {read_output(item, "path", artifact.path), read(item, "size", artifact.size),
             read(item, "sha256", artifact.sha256), read(item, "content_base64", content)});
        !s) {
      return std::unexpected(s.error());
    }
    std::optional<std::string> bytes = base64_decode(content);
    if (!bytes) return fail(ErrorCode::kInvalidArgument, "artifact content is not base64");
    artifact.content = std::move(*bytes);
    r.artifacts.push_back(std::move(artifact));
  }
  if (const json* network = member(in, "network")) {
    NetworkReport report;
    if (Status st = read_network_access(*network, report.access); !st) {
      return std::unexpected(st.error());
    }
    const Result<std::vector<json>> connections = items(*network, "connections");
    if (!connections) return std::unexpected(connections.error());
    for (const json& item : *connections) {
      NetConnection c;
      if (Status st = first_failure({read(item, "method", c.method), read(item, "host", c.host),
                                     read(item, "port", c.port), read(item, "address", c.address),
                                     read(item, "allowed", c.allowed), read(item, "why", c.why),
                                     read(item, "bytes_out", c.bytes_out),
                                     read(item, "bytes_in", c.bytes_in)});
          !st) {
        return std::unexpected(st.error());
      }
      report.connections.push_back(std::move(c));
    }
    if (Status st = first_failure({read(*network, "dropped", report.dropped),
                                   read(*network, "limit_reached", report.limit_reached)});
        !st) {
      return std::unexpected(st.error());
    }
    r.network = std::move(report);
  }
  return r;
}

Result<Capabilities> capabilities_from_json(const json& in) {
  if (!in.is_array()) return fail(ErrorCode::kInvalidArgument, "capabilities are a JSON array");
  Capabilities out;
  for (const json& item : in) {
    if (!item.is_object()) return std::unexpected(unexpected_value("capability", item));
    Capability c;
    auto aspect = aspect_of(item);
    if (!aspect) return std::unexpected(aspect.error());
    c.aspect = *aspect;
    std::string level;
    if (Status s = read(item, "enforcement", level); !s) return std::unexpected(s.error());
    const auto named = enum_named(kAllEnforcements, level);
    if (!named) return std::unexpected(unexpected_value("enforcement", level));
    c.enforcement = *named;
    if (Status s = first_failure({read(item, "mechanism", c.mechanism),
                                  read(item, "value", c.value), read(item, "detail", c.detail)});
        !s) {
      return std::unexpected(s.error());
    }
    if (const auto range = item.find("range"); range != item.end() && range->is_object()) {
      LimitRange r;
      if (Status s = first_failure({read(*range, "min", r.min), read(*range, "max", r.max)}); !s) {
        return std::unexpected(s.error());
      }
      c.range = r;
    }
    if (const json* data = member(item, "claim")) {
      if (Status s = read_claim_json(*data, c); !s) return std::unexpected(s.error());
    }
    out.aspects.push_back(std::move(c));
  }
  return out;
}

}  // namespace cordon
