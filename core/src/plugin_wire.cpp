#include "cordon/plugin_wire.h"

#include "cordon/result_json.h"
#include "cordon/text.h"
#include "json_fields.h"

namespace cordon::wire {
namespace {

using json_fields::first_failure;
using json_fields::member;
using json_fields::read;
using json_fields::unexpected_value;
using nlohmann::json;

json bytes(std::string_view value) {
  bool lossy = false;
  std::string text = to_valid_utf8(value, &lossy);
  if (!lossy) return text;
  return json{{"base64", base64_encode(value)}};
}

Result<std::string> bytes_from(std::string_view key, const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.size() == 1 && value.contains("base64") &&
      value["base64"].is_string()) {
    if (auto decoded = base64_decode(value["base64"].get<std::string>())) return *decoded;
  }
  return std::unexpected(unexpected_value(key, value));
}

json optional_number(const auto& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

json to_json(const Limits& limits) {
  return json{{"memory_bytes", optional_number(limits.memory_bytes)},
              {"max_processes", optional_number(limits.max_processes)},
              {"cpu_time_ms", limits.cpu_time ? json(limits.cpu_time->count()) : json(nullptr)},
              {"output_bytes", limits.output_bytes},
              {"scratch_bytes", optional_number(limits.scratch_bytes)}};
}

Result<Limits> limits_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "limits are a JSON object");
  Limits out;
  std::optional<std::int64_t> cpu_ms;
  if (Status s = first_failure(
          {read(in, "memory_bytes", out.memory_bytes), read(in, "max_processes", out.max_processes),
           read(in, "cpu_time_ms", cpu_ms), read(in, "output_bytes", out.output_bytes),
           read(in, "scratch_bytes", out.scratch_bytes)});
      !s) {
    return std::unexpected(s.error());
  }
  if (cpu_ms) out.cpu_time = std::chrono::milliseconds(*cpu_ms);
  return out;
}

json to_json(const RunRequest& request) {
  json env = json::array();
  for (const auto& [name, value] : request.env)
    env.push_back(json::array({bytes(name), bytes(value)}));
  // An array of pairs, not an object: a path that is not UTF-8 cannot be an object key.
  json files = json::array();
  for (const auto& [path, content] : request.input_files) {
    files.push_back(json::array({bytes(path), bytes(content)}));
  }
  json globs = json::array();
  for (const auto& glob : request.artifact_globs) globs.push_back(bytes(glob));
  return json{{"code", bytes(request.code)},
              {"language", to_string(request.language)},
              {"timeout_ms", request.timeout.count()},
              {"limits", to_json(request.limits)},
              {"stdin", request.stdin_data ? bytes(*request.stdin_data) : json(nullptr)},
              {"env", std::move(env)},
              {"input_files", std::move(files)},
              {"artifact_globs", std::move(globs)},
              {"artifact_max_bytes", request.artifact_max_bytes},
              {"setup_bound_ms", request.setup_bound.count()},
              {"network", to_json(request.network)},
              {"tool_description", request.tool_description
                                       ? json{{"id", bytes(request.tool_description->id)},
                                              {"version", request.tool_description->version}}
                                       : json(nullptr)}};
}

Result<RunRequest> request_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "a request is a JSON object");
  RunRequest out;
  if (const json* code = member(in, "code")) {
    auto value = bytes_from("code", *code);
    if (!value) return std::unexpected(value.error());
    out.code = std::move(*value);
  }
  if (const json* language = member(in, "language")) {
    if (!language->is_string()) return std::unexpected(unexpected_value("language", *language));
    auto parsed = parse_language(language->get<std::string>());
    if (!parsed) return std::unexpected(parsed.error());
    out.language = *parsed;
  }
  if (Status s = first_failure({read(in, "timeout_ms", out.timeout),
                                read(in, "artifact_max_bytes", out.artifact_max_bytes),
                                read(in, "setup_bound_ms", out.setup_bound)});
      !s) {
    return std::unexpected(s.error());
  }
  if (const json* limits = member(in, "limits")) {
    auto value = limits_from_json(*limits);
    if (!value) return std::unexpected(value.error());
    out.limits = *value;
  }
  if (const json* stdin_data = member(in, "stdin")) {
    auto value = bytes_from("stdin", *stdin_data);
    if (!value) return std::unexpected(value.error());
    out.stdin_data = std::move(*value);
  }
  // "env" and "input_files": arrays of [name, value] pairs.
  auto pairs = [&](std::string_view key, auto add) -> Status {
    const json* list = member(in, key);
    if (list == nullptr) return {};
    if (!list->is_array()) return std::unexpected(unexpected_value(key, *list));
    for (const json& pair : *list) {
      if (!pair.is_array() || pair.size() != 2) return std::unexpected(unexpected_value(key, pair));
      auto first = bytes_from(key, pair[0]);
      auto second = bytes_from(key, pair[1]);
      if (!first || !second) return std::unexpected(unexpected_value(key, pair));
      add(std::move(*first), std::move(*second));
    }
    return {};
  };
  if (Status s = first_failure(
          {pairs("env", [&](std::string n,
                            std::string v) { out.env.emplace_back(std::move(n), std::move(v)); }),
           pairs("input_files",
                 [&](std::string p, std::string c) {
                   out.input_files[std::move(p)] = std::move(c);
                 })});
      !s) {
    return std::unexpected(s.error());
  }
  if (const json* globs = member(in, "artifact_globs")) {
    if (!globs->is_array()) return std::unexpected(unexpected_value("artifact_globs", *globs));
    for (const json& glob : *globs) {
      auto value = bytes_from("artifact_globs", glob);
      if (!value) return std::unexpected(value.error());
      out.artifact_globs.push_back(std::move(*value));
    }
  }
  if (const json* tool = member(in, "tool_description")) {
    const json* id = tool->is_object() ? member(*tool, "id") : nullptr;
    if (id == nullptr) return std::unexpected(unexpected_value("tool_description", *tool));
    auto value = bytes_from("tool_description", *id);
    if (!value) return std::unexpected(value.error());
    ToolDescriptionRef ref{std::move(*value), 0};
    if (auto s = read(*tool, "version", ref.version); !s) return std::unexpected(s.error());
    out.tool_description = std::move(ref);
  }
  if (const json* network = member(in, "network")) {
    if (Status s = read_network_access(*network, out.network); !s) {
      return std::unexpected(s.error());
    }
  }
  return out;
}

json to_json(const Probe& probe) {
  json out{{"available", probe.available}, {"reason", to_valid_utf8(probe.reason)}};
  if (!probe.variant.empty()) out["variant"] = to_valid_utf8(probe.variant);
  if (!probe.variants.empty()) {
    json variants = json::array();
    for (const BackendVariant& v : probe.variants) {
      variants.push_back(
          {{"label", to_valid_utf8(v.label)}, {"runtime", to_valid_utf8(v.runtime)}});
    }
    out["variants"] = std::move(variants);
  }
  return out;
}

Result<Probe> probe_from_json(const json& in) {
  const json* available = in.is_object() ? member(in, "available") : nullptr;
  if (available == nullptr || !available->is_boolean()) {
    return fail(ErrorCode::kInvalidArgument, "a probe has a boolean 'available': " + in.dump());
  }
  Probe out{available->get<bool>(), ""};
  if (const json* reason = member(in, "reason"); reason != nullptr && reason->is_string()) {
    out.reason = reason->get<std::string>();
  }
  // A plugin may name its variant and the others the host has (Probe); an older plugin's
  // probe has neither. One that is malformed is the plugin's failure, as above.
  if (const json* variant = member(in, "variant"); variant != nullptr) {
    if (!variant->is_string() || variant->get<std::string>().empty()) {
      return fail(ErrorCode::kInvalidArgument, "a probe's 'variant' is a non-empty string");
    }
    out.variant = variant->get<std::string>();
  }
  if (const json* variants = member(in, "variants"); variants != nullptr) {
    if (!variants->is_array()) {
      return fail(ErrorCode::kInvalidArgument, "a probe's 'variants' is an array");
    }
    for (const json& v : *variants) {
      const json* label = v.is_object() ? member(v, "label") : nullptr;
      const json* runtime = v.is_object() ? member(v, "runtime") : nullptr;
      if (label == nullptr || !label->is_string() || label->get<std::string>().empty() ||
          runtime == nullptr || !runtime->is_string() || runtime->get<std::string>().empty()) {
        return fail(ErrorCode::kInvalidArgument,
                    "a probe's variant has a non-empty 'label' and 'runtime': " + v.dump());
      }
      out.variants.push_back({label->get<std::string>(), runtime->get<std::string>()});
    }
  }
  return out;
}

json to_json(const Result<Plan>& plan) {
  if (plan) return json{{"plan", to_json(*plan)}};
  return json{{"error",
               {{"code", to_string(plan.error().code)},
                {"message", to_valid_utf8(plan.error().describe())}}}};
}

Result<Plan> plan_from_json(const json& in) {
  if (const json* plan = in.is_object() ? member(in, "plan") : nullptr) {
    // A plan of the wrong shape is the plugin's failure, not the request's.
    Result<Plan> read = cordon::plan_from_json(*plan);
    if (!read) return fail(ErrorCode::kPlugin, "plan: " + read.error().message);
    return read;
  }
  const json* error = in.is_object() ? member(in, "error") : nullptr;
  if (error == nullptr || !error->is_object()) {
    return fail(ErrorCode::kPlugin, "a plan answer has 'plan' or 'error': " + in.dump());
  }
  const std::string message = error->value("message", std::string("no message"));
  // The plugin's own refusal of the request (kInvalidArgument) stays one; anything else is
  // the plugin's failure.
  const bool invalid =
      error->value("code", std::string()) == to_string(ErrorCode::kInvalidArgument);
  return fail(invalid ? ErrorCode::kInvalidArgument : ErrorCode::kPlugin, message);
}

}  // namespace cordon::wire
