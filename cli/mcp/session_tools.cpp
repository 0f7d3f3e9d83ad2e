#include "mcp/session_tools.h"

#include <algorithm>
#include <utility>

#include "cordon/text.h"
#include "cordon/units.h"
#include "frontend/session_registry.h"
#include "mcp/service.h"
#include "prompts/session_facts.h"
#include "schema_check.h"
#include "tool_call.h"

namespace cordon::cli::mcp {
namespace {

using nlohmann::json;

std::unexpected<Error> invalid(const std::string& what) {
  return fail(ErrorCode::kInvalidArgument, what);
}

// The served tools/list entry of `name` (null when not served).
const json* served(const Service& service, std::string_view name) {
  const auto& tools = service.session_tools();
  const auto it = std::ranges::find_if(
      tools, [&](const json& tool) { return tool.value("name", std::string()) == name; });
  return it == tools.end() ? nullptr : &*it;
}

// `arguments` without its null members: null and left out mean the same (OpenAI's strict
// shape sends null for what the MCP shape leaves out).
json without_nulls(const json& arguments) {
  json out = json::object();
  for (const auto& [key, value] : arguments.items()) {
    if (!value.is_null()) out[key] = value;
  }
  return out;
}

std::string string_arg(const json& given, const char* name) {
  const auto it = given.find(name);
  return it != given.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double seconds_of(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// A session tool's answer: what the model reads, and (2025-06-18 and later) the same as
// structuredContent, which the tool's outputSchema describes.
json ok_result(const std::string& text, json data, bool structured) {
  json out{{"content", json::array({json{{"type", "text"}, {"text", to_valid_utf8(text)}}})},
           {"isError", false}};
  if (structured) out["structuredContent"] = std::move(data);
  return out;
}

// session_open: the session's base request from the operator's fixed settings (limits, env,
// allow-list, environment, as every run_code call's) and the language and timeout asked.
Result<SessionOperation> open_call(Service& service, const json& tool, const json& given,
                                   const std::string& owner, bool structured, SessionBook& book) {
  const ToolCallDefaults& defaults = service.defaults();
  std::string language_name = string_arg(given, "language");
  if (language_name.empty()) {
    language_name = tool["inputSchema"]["properties"]["language"].value("default", "sh");
  }
  Result<Language> language = parse_language(language_name);
  if (!language) return invalid("language: " + language.error().message);
  const auto timeout_it = given.find("timeout");
  Result<std::chrono::milliseconds> timeout =
      timeout_from(timeout_it == given.end() ? nullptr : &*timeout_it, defaults.max_timeout);
  if (!timeout) return std::unexpected(timeout.error());
  SessionOptions options;
  options.base.language = *language;
  options.base.timeout = *timeout;
  options.base.limits = defaults.limits;
  options.base.env = defaults.env;
  options.base.network = defaults.network;
  options.base.environment = defaults.environment;
  options.base.tool_description = defaults.tool_description;
  const SessionBook::Defaults kept{.language = *language, .timeout = *timeout};
  return [&service, &book, options, owner, structured, kept](const CancelToken& /*cancel*/) {
    frontend::SessionRegistry& registry = *service.sessions();
    Result<std::string> id = registry.open(service.backend(), options, owner);
    if (!id) return tool_error_result(id.error().message);
    book.remember(*id, kept, service, owner);
    const auto& o = registry.options();
    const std::string language_text(to_string(kept.language));
    return ok_result("Session " + *id + " is open (" + language_text + "). Pass session \"" + *id +
                         "\" to run_code to run in it. It ends after " +
                         frontend::duration_text(o.idle_timeout) + " without a call, " +
                         frontend::duration_text(o.max_age) +
                         " from now at the latest, or at session_close.",
                     json{{"session", *id},
                          {"language", language_text},
                          {"idle_timeout_seconds", seconds_of(o.idle_timeout)},
                          {"max_age_seconds", seconds_of(o.max_age)}},
                     structured);
  };
}

Result<SessionOperation> read_call(Service& service, const std::string& id, const json& given,
                                   const std::string& owner, bool structured) {
  const std::string path = string_arg(given, "path");
  return [&service, id, path, owner, structured](const CancelToken& /*cancel*/) {
    frontend::SessionRegistry& registry = *service.sessions();
    Result<std::string> bytes =
        registry.read_file(id, owner, path, registry.options().max_read_bytes);
    if (!bytes) return tool_error_result(bytes.error().message);
    bool lossy = false;
    const std::string text = to_valid_utf8(*bytes, &lossy);
    json data{{"session", id}, {"path", path}, {"size", bytes->size()}};
    if (!lossy) {
      data["text"] = text;
      return ok_result(text, std::move(data), structured);
    }
    const std::string encoded = base64_encode(*bytes);
    data["content_base64"] = encoded;
    return ok_result(path + " holds " + std::to_string(bytes->size()) +
                         " bytes that are not UTF-8 text; in base64:\n" + encoded,
                     std::move(data), structured);
  };
}

Result<SessionOperation> write_call(Service& service, const std::string& id, const json& given,
                                    const std::string& owner, bool structured) {
  const std::string path = string_arg(given, "path");
  const bool has_text = given.contains("text");
  const bool has_base64 = given.contains("content_base64");
  if (has_text == has_base64) {
    return invalid("give the content as exactly one of text and content_base64");
  }
  std::string bytes = string_arg(given, has_text ? "text" : "content_base64");
  if (has_base64) {
    std::optional<std::string> decoded = base64_decode(bytes);
    if (!decoded) return invalid("content_base64: not valid base64");
    bytes = std::move(*decoded);
  }
  return [&service, id, path, owner, structured,
          bytes = std::move(bytes)](const CancelToken& /*cancel*/) {
    if (Status s = service.sessions()->write_file(id, owner, path, bytes); !s) {
      return tool_error_result(s.error().message);
    }
    return ok_result(
        "Wrote " + path + " (" + std::to_string(bytes.size()) + " bytes) in session " + id + ".",
        json{{"session", id}, {"path", path}, {"size", bytes.size()}}, structured);
  };
}

Result<SessionOperation> files_call(Service& service, const std::string& id, const json& given,
                                    const std::string& owner, bool structured) {
  const std::string dir = string_arg(given, "dir");
  return [&service, id, dir, owner, structured](const CancelToken& /*cancel*/) {
    Result<std::vector<WorkspaceEntry>> entries = service.sessions()->list_files(id, owner, dir);
    if (!entries) return tool_error_result(entries.error().message);
    std::string text = std::to_string(entries->size()) + " entries in " +
                       (dir.empty() ? std::string("the workspace") : dir) + " of session " + id +
                       (entries->empty() ? "." : ":");
    json files = json::array();
    for (const WorkspaceEntry& e : *entries) {
      text += "\n" + e.path + (e.directory ? "/" : " (" + std::to_string(e.size) + " bytes)");
      files.push_back({{"path", e.path}, {"directory", e.directory}, {"size", e.size}});
    }
    return ok_result(text, json{{"session", id}, {"files", std::move(files)}}, structured);
  };
}

}  // namespace

void SessionBook::remember(const std::string& id, Defaults defaults, Service& service,
                           const std::string& owner) {
  const std::lock_guard lock(mutex_);
  frontend::SessionRegistry* registry = service.sessions();
  if (registry != nullptr && sessions_.size() >= registry->options().max_sessions) {
    // Those that ended by idle time, age or with the server are not told here: look.
    std::erase_if(sessions_,
                  [&](const auto& entry) { return !registry->holds(entry.first, owner); });
  }
  sessions_[id] = defaults;
}

void SessionBook::forget(const std::string& id) {
  const std::lock_guard lock(mutex_);
  sessions_.erase(id);
}

std::optional<SessionBook::Defaults> SessionBook::find(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  return it->second;
}

bool is_session_tool(std::string_view name) {
  return std::ranges::find(prompts::kSessionTools, name) != prompts::kSessionTools.end();
}

Result<SessionOperation> session_tool_call(Service& service, std::string_view name,
                                           const json& arguments, const std::string& owner,
                                           bool structured, SessionBook& book) {
  const json* tool = served(service, name);
  if (service.sessions() == nullptr || tool == nullptr) {
    return fail(ErrorCode::kUnavailable, service.sessions_refusal());
  }
  if (!arguments.is_object()) {
    return invalid("arguments: must be a JSON object with the tool's properties; got " +
                   shown_value(arguments));
  }
  const json given = without_nulls(arguments);
  if (Status s = check_schema(given, (*tool)["inputSchema"]); !s) {
    return std::unexpected(s.error());
  }
  if (name == "session_open") return open_call(service, *tool, given, owner, structured, book);
  const std::string id = string_arg(given, "session");
  if (name == "session_read_file") return read_call(service, id, given, owner, structured);
  if (name == "session_write_file") return write_call(service, id, given, owner, structured);
  if (name == "session_files") return files_call(service, id, given, owner, structured);
  if (name == "session_reset") {
    return [&service, id, owner, structured](const CancelToken& /*cancel*/) {
      if (Status s = service.sessions()->reset(id, owner); !s) {
        return tool_error_result(s.error().message);
      }
      return ok_result("Session " + id + " was reset; its files are kept.", json{{"session", id}},
                       structured);
    };
  }
  return [&service, &book, id, owner, structured](const CancelToken& /*cancel*/) {
    if (Status s = service.sessions()->close(id, owner); !s) {
      return tool_error_result(s.error().message);
    }
    book.forget(id);
    return ok_result("Session " + id + " is closed: its processes and files are gone.",
                     json{{"session", id}}, structured);
  };
}

Result<std::optional<SessionTarget>> session_of_run(const json& arguments, const std::string& owner,
                                                    const SessionBook& book, RunRequest& request) {
  const auto session = arguments.is_object() ? arguments.find("session") : arguments.end();
  if (!arguments.is_object() || session == arguments.end() || session->is_null()) {
    return std::nullopt;
  }
  const auto named = [&](const char* name) {
    const auto it = arguments.find(name);
    return it != arguments.end() && !it->is_null();
  };
  if (named("files")) {
    return invalid("files: not taken in a session call; write them with session_write_file");
  }
  if (named("collect")) {
    return invalid("collect: not taken in a session call; read them with session_read_file");
  }
  const std::string id = session->get<std::string>();  // the schema check said: a string
  if (const std::optional<SessionBook::Defaults> kept = book.find(id)) {
    if (!named("language")) request.language = kept->language;
    if (!named("timeout")) request.timeout = kept->timeout;
  }
  return SessionTarget{.id = id, .owner = owner};
}

}  // namespace cordon::cli::mcp
