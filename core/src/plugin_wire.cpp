#include "cordon/plugin_wire.h"

#include "cordon/json_number.h"
#include "cordon/text.h"

namespace cordon::wire {
namespace {

using nlohmann::json;

json bytes(std::string_view value) {
  bool lossy = false;
  std::string text = to_valid_utf8(value, &lossy);
  if (!lossy) return text;
  return json{{"base64", base64_encode(value)}};
}

Error bad(std::string_view key, const json& value) {
  return Error{ErrorCode::kInvalidArgument, 0,
               "'" + std::string(key) + "' has an unexpected value: " + value.dump()};
}

Result<std::string> bytes_from(std::string_view key, const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.size() == 1 && value.contains("base64") &&
      value["base64"].is_string()) {
    if (auto decoded = base64_decode(value["base64"].get<std::string>())) return *decoded;
  }
  return std::unexpected(bad(key, value));
}

// A member, when present and not null.
const json* member(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

template <std::integral T>
Status read_integer(const json& object, std::string_view key, std::optional<T>& out) {
  const json* value = member(object, key);
  if (value == nullptr) return {};
  std::optional<T> read = json_integer<T>(*value);
  if (!read) return std::unexpected(bad(key, *value));
  out = std::move(read);
  return {};
}

template <std::integral T>
Status read_integer(const json& object, std::string_view key, T& out) {
  std::optional<T> read;
  if (auto s = read_integer(object, key, read); !s) return s;
  if (read) out = *read;
  return {};
}

Status read_ms(const json& object, std::string_view key, std::chrono::milliseconds& out) {
  std::optional<std::int64_t> ms;
  if (auto s = read_integer(object, key, ms); !s) return s;
  if (ms) out = std::chrono::milliseconds(*ms);
  return {};
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
  for (const Status& s :
       {read_integer(in, "memory_bytes", out.memory_bytes),
        read_integer(in, "max_processes", out.max_processes),
        read_integer(in, "cpu_time_ms", cpu_ms), read_integer(in, "output_bytes", out.output_bytes),
        read_integer(in, "scratch_bytes", out.scratch_bytes)}) {
    if (!s) return std::unexpected(s.error());
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
              {"tool_description", request.tool_description
                                       ? json{{"id", bytes(request.tool_description->id)},
                                              {"version", request.tool_description->version}}
                                       : json(nullptr)}};
}

Result<RunRequest> request_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "a request is a JSON object");
  RunRequest out;
  if (const json* code = member(in, "code")) {
    auto read = bytes_from("code", *code);
    if (!read) return std::unexpected(read.error());
    out.code = std::move(*read);
  }
  if (const json* language = member(in, "language")) {
    if (!language->is_string()) return std::unexpected(bad("language", *language));
    auto parsed = parse_language(language->get<std::string>());
    if (!parsed) return std::unexpected(parsed.error());
    out.language = *parsed;
  }
  for (const Status& s : {read_ms(in, "timeout_ms", out.timeout),
                          read_integer(in, "artifact_max_bytes", out.artifact_max_bytes),
                          read_ms(in, "setup_bound_ms", out.setup_bound)}) {
    if (!s) return std::unexpected(s.error());
  }
  if (const json* limits = member(in, "limits")) {
    auto read = limits_from_json(*limits);
    if (!read) return std::unexpected(read.error());
    out.limits = *read;
  }
  if (const json* stdin_data = member(in, "stdin")) {
    auto read = bytes_from("stdin", *stdin_data);
    if (!read) return std::unexpected(read.error());
    out.stdin_data = std::move(*read);
  }
  // "env" and "input_files": arrays of [name, value] pairs.
  auto pairs = [&](std::string_view key, auto add) -> Status {
    const json* list = member(in, key);
    if (list == nullptr) return {};
    if (!list->is_array()) return std::unexpected(bad(key, *list));
    for (const json& pair : *list) {
      if (!pair.is_array() || pair.size() != 2) return std::unexpected(bad(key, pair));
      auto first = bytes_from(key, pair[0]);
      auto second = bytes_from(key, pair[1]);
      if (!first || !second) return std::unexpected(bad(key, pair));
      add(std::move(*first), std::move(*second));
    }
    return {};
  };
  for (const Status& s :
       {pairs("env", [&](std::string n,
                         std::string v) { out.env.emplace_back(std::move(n), std::move(v)); }),
        pairs("input_files", [&](std::string p, std::string c) {
          out.input_files[std::move(p)] = std::move(c);
        })}) {
    if (!s) return std::unexpected(s.error());
  }
  if (const json* globs = member(in, "artifact_globs")) {
    if (!globs->is_array()) return std::unexpected(bad("artifact_globs", *globs));
    for (const json& glob : *globs) {
      auto read = bytes_from("artifact_globs", glob);
      if (!read) return std::unexpected(read.error());
      out.artifact_globs.push_back(std::move(*read));
    }
  }
  if (const json* tool = member(in, "tool_description")) {
    const json* id = tool->is_object() ? member(*tool, "id") : nullptr;
    if (id == nullptr) return std::unexpected(bad("tool_description", *tool));
    auto read = bytes_from("tool_description", *id);
    if (!read) return std::unexpected(read.error());
    ToolDescriptionRef ref{std::move(*read), 0};
    if (auto s = read_integer(*tool, "version", ref.version); !s) return std::unexpected(s.error());
    out.tool_description = std::move(ref);
  }
  return out;
}

json to_json(const Probe& probe) {
  return json{{"available", probe.available}, {"reason", to_valid_utf8(probe.reason)}};
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
  return out;
}

json to_json(const Result<json>& plan) {
  if (plan) return json{{"plan", *plan}};
  return json{{"error",
               {{"code", to_string(plan.error().code)},
                {"message", to_valid_utf8(plan.error().describe())}}}};
}

Result<json> plan_from_json(const json& in) {
  if (const json* plan = in.is_object() ? member(in, "plan") : nullptr) return *plan;
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
