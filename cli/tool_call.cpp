// The arguments half of a tool call: checked against the rendered inputSchema, then
// turned into a RunRequest. The result half is in tool_result.cpp.
#include "tool_call.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "cordon/text.h"
#include "cordon/units.h"
#include "schema_check.h"

namespace cordon::cli {
namespace {

using nlohmann::json;

std::unexpected<Error> invalid(const std::string& field, const std::string& what) {
  return fail(ErrorCode::kInvalidArgument, field + ": " + what);
}

// The argument `name` when the schema offers it and the model gave a value other than
// null; null otherwise (an absent optional property and null mean the same).
const json* given(const json& arguments, const json& schema, const char* name) {
  const auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object() || !properties->contains(name)) {
    return nullptr;
  }
  const auto v = arguments.find(name);
  return v == arguments.end() || v->is_null() ? nullptr : &*v;
}

// Whether `schema` declares `name` as a type it takes.
bool takes_type(const json& schema, const char* name) {
  const auto type = schema.find("type");
  if (type == schema.end()) return false;
  return type->is_array() ? std::ranges::find(*type, json(name)) != type->end() : *type == name;
}

// The arguments with an omitted optional property and an explicit null meaning the same, in
// both directions: null for a property the schema does not require is left out (a model
// shown the strict OpenAI shape sends null where an MCP client's model leaves it out), and
// a required property whose type takes null may be left out (the released templates that
// require every property, as strict mode does: run_code v1 to v3).
json nulls_as_omitted(const json& arguments, const json& schema) {
  const auto properties = schema.find("properties");
  if (!arguments.is_object() || properties == schema.end() || !properties->is_object()) {
    return arguments;
  }
  const json required = schema.value("required", json::array());
  json out = arguments;
  for (const auto& [name, property] : properties->items()) {
    const bool is_required = std::ranges::find(required, json(name)) != required.end();
    const auto value = out.find(name);
    if (value != out.end() && value->is_null() && !is_required) {
      out.erase(value);
    } else if (value == out.end() && is_required && takes_type(property, "null")) {
      out[name] = nullptr;
    }
  }
  return out;
}

// What the schema says a call that leaves `name` out gets ("default"), when it says so.
const json* stated_default(const json& schema, const char* name) {
  const auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return nullptr;
  const auto property = properties->find(name);
  if (property == properties->end() || !property->is_object()) return nullptr;
  const auto value = property->find("default");
  return value == property->end() || value->is_null() ? nullptr : &*value;
}

// "10", "1.5": seconds as a model writes them.
std::string seconds_text(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000);
  std::string text = std::to_string(static_cast<double>(d.count()) / 1000.0);
  while (text.back() == '0') text.pop_back();
  return text;
}

// An input file's name as `cordon run --file LOCAL:NAME` takes it: validate() holds the
// one rule for names (relative, no "..", no NUL, naming a file).
Status check_file_name(const std::string& name, const std::string& field) {
  if (name.empty()) return invalid(field, "must not be empty; give a relative path like data.csv");
  RunRequest probe;
  probe.input_files.emplace(name, "");
  if (Status s = validate(probe); !s) return invalid(field, s.error().message);
  return {};
}

Status add_files(const json& files, std::uint64_t most, RunRequest& request) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string at = "files[" + std::to_string(i) + "]";
    const json& file = files[i];
    // The schema check has run; these guard a schema that describes files otherwise.
    if (!file.is_object() || !file.contains("name") || !file["name"].is_string() ||
        !file.contains("content_base64") || !file["content_base64"].is_string()) {
      return invalid(at, "must be an object with a name and a content_base64 string");
    }
    const auto& name = file["name"].get_ref<const std::string&>();
    if (Status s = check_file_name(name, at + ".name"); !s) return s;
    std::optional<std::string> bytes =
        base64_decode(file["content_base64"].get_ref<const std::string&>());
    if (!bytes) {
      return invalid(at + ".content_base64",
                     "is not valid base64 (A-Z, a-z, 0-9, + and /, padded with =)");
    }
    total += bytes->size();
    if (bytes->size() > most || total > most) {
      return invalid(at + ".content_base64", "the files may hold at most " + format_size(most) +
                                                 " together, decoded; this one brings them to " +
                                                 format_size(total));
    }
    if (!request.input_files.emplace(name, std::move(*bytes)).second) {
      return invalid(at + ".name", "\"" + name + "\" is given twice");
    }
  }
  return {};
}

// A pattern is matched against paths relative to the working directory (request.h):
// one that is absolute or climbs out with ".." can never match, so it is a mistake the
// model should hear about, not an empty result.
Status add_collect(const json& patterns, RunRequest& request) {
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::string at = "collect[" + std::to_string(i) + "]";
    if (!patterns[i].is_string()) return invalid(at, "must be a string");
    const auto& glob = patterns[i].get_ref<const std::string&>();
    if (glob.empty()) return invalid(at, R"(must not be empty; e.g. "*.png" or "out/*.csv")");
    if (glob.find('\0') != std::string::npos) return invalid(at, "must not contain a NUL byte");
    if (glob.front() == '/') {
      return invalid(at, "must be relative to the working directory, e.g. \"out/*.csv\"; got " +
                             shown_value(patterns[i]));
    }
    const std::string padded = "/" + glob + "/";
    if (padded.find("/../") != std::string::npos) {
      return invalid(at, "must not climb out of the working directory with \"..\"; got " +
                             shown_value(patterns[i]));
    }
    request.artifact_globs.push_back(glob);
  }
  return {};
}

}  // namespace

// Seconds (a JSON number) -> the run's timeout. null is the operator's maximum; zero or
// less is refused, never "unbounded" or a silent default; more than the maximum is refused
// with the maximum named, so the model can retry within it.
Result<std::chrono::milliseconds> timeout_from(const json* value, std::chrono::milliseconds most) {
  if (most.count() <= 0) most = kDefaultTimeout;  // as a request's own 0 means the default
  if (value == nullptr) return most;
  const double seconds = value->get<double>();
  const std::string null_for = "; left out or null, " + seconds_text(most) + " s";
  if (!std::isfinite(seconds) || seconds <= 0) {
    return invalid("timeout", "must be more than 0 seconds" + null_for + "; got " + value->dump());
  }
  if (seconds * 1000.0 > static_cast<double>(most.count())) {
    return invalid("timeout", "must be at most " + seconds_text(most) +
                                  " seconds (the operator's limit); got " + shown_value(*value));
  }
  // Rounded up: a timeout shorter than asked would stop code the model expected to finish.
  const auto ms = static_cast<std::int64_t>(std::ceil(seconds * 1000.0));
  return std::chrono::milliseconds(std::max<std::int64_t>(ms, 1));
}

Result<RunRequest> request_from_tool_call(const json& arguments, const json& input_schema,
                                          const ToolCallDefaults& defaults) {
  if (!arguments.is_object()) {
    return fail(ErrorCode::kInvalidArgument,
                "arguments: must be a JSON object with the tool's properties; got " +
                    shown_value(arguments));
  }
  const json given_ones = nulls_as_omitted(arguments, input_schema);
  if (Status s = check_schema(given_ones, input_schema); !s) return std::unexpected(s.error());

  RunRequest request;
  request.limits = defaults.limits;
  request.env = defaults.env;
  request.network = defaults.network;
  request.tool_description = defaults.tool_description;
  request.environment = defaults.environment;
  request.artifact_max_bytes = defaults.max_artifact_bytes;

  const json* code = given(given_ones, input_schema, "code");
  if (code == nullptr || !code->is_string()) {
    return invalid("code", "missing: give the program to run as a string");
  }
  request.code = code->get<std::string>();
  if (request.code.size() > kMaxCodeBytes) {
    return invalid("code", "must be at most " + format_size(kMaxCodeBytes) + "; got " +
                               format_size(request.code.size()) +
                               "; pass large data as an input file instead");
  }
  const json* language = given(given_ones, input_schema, "language");
  if (language == nullptr) language = stated_default(input_schema, "language");
  if (language != nullptr) {
    if (!language->is_string()) return invalid("language", "must be a string");
    Result<Language> parsed = parse_language(language->get<std::string>());
    if (!parsed) return invalid("language", parsed.error().message);
    request.language = *parsed;
  }
  const json* timeout = given(given_ones, input_schema, "timeout");
  if (timeout != nullptr && !timeout->is_number()) {
    return invalid("timeout", "must be a number of seconds or null");
  }
  Result<std::chrono::milliseconds> t = timeout_from(timeout, defaults.max_timeout);
  if (!t) return std::unexpected(t.error());
  request.timeout = *t;

  if (const json* files = given(given_ones, input_schema, "files")) {
    if (!files->is_array()) return invalid("files", "must be an array or null");
    if (Status s = add_files(*files, defaults.max_input_bytes, request); !s) {
      return std::unexpected(s.error());
    }
  }
  if (const json* collect = given(given_ones, input_schema, "collect")) {
    if (!collect->is_array()) {
      return invalid("collect", "must be an array or null");
    }
    if (Status s = add_collect(*collect, request); !s) return std::unexpected(s.error());
  }
  // What every backend refuses alike; the operator's env and limits included.
  if (Status s = validate(request); !s) return std::unexpected(s.error());
  return request;
}

}  // namespace cordon::cli
