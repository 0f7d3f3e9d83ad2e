#include "cordon/session_wire.h"

#include <array>
#include <optional>
#include <utility>

#include "cordon/plugin_wire.h"
#include "cordon/text.h"
#include "json_fields.h"

namespace cordon::wire {
namespace {

using json_fields::first_failure;
using json_fields::member;
using json_fields::read;
using nlohmann::json;

constexpr std::array kErrorCodes = {
    ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kUnavailable, ErrorCode::kSystem,
    ErrorCode::kPlugin,          ErrorCode::kTimeout,  ErrorCode::kInternal,
};

json ok_answer(json payload) { return json{{"ok", std::move(payload)}}; }

Error bad_call(std::string_view why) {
  return Error{ErrorCode::kInvalidArgument, 0, "session call: " + std::string(why)};
}

json figure(const std::optional<std::int64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

json to_json(const SessionOptions& options) {
  return json{{"request", to_json(options.base)}, {"workspace_bytes", options.workspace_bytes}};
}

Result<SessionOptions> session_options_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "session options are an object");
  SessionOptions out;
  const json* request = member(in, "request");
  if (request == nullptr) return fail(ErrorCode::kInvalidArgument, "session options: no request");
  Result<RunRequest> base = request_from_json(*request);
  if (!base) return std::unexpected(base.error());
  out.base = std::move(*base);
  if (Status s = read(in, "workspace_bytes", out.workspace_bytes); !s) {
    return std::unexpected(s.error());
  }
  return out;
}

json session_reset_call() { return json{{"op", "reset"}}; }
json session_stats_call() { return json{{"op", "stats"}}; }
json session_list_call(std::string_view dir) { return json{{"op", "list"}, {"path", dir}}; }
json session_read_call(std::string_view path, std::uint64_t max_bytes) {
  return json{{"op", "read"}, {"path", path}, {"max_bytes", max_bytes}};
}
json session_write_call(std::string_view path, std::string_view bytes) {
  return json{{"op", "write"}, {"path", path}, {"content_base64", base64_encode(bytes)}};
}

json serve_session_call(BackendSession& session, const json& call) {
  std::string op;
  std::string path;
  if (Status s = first_failure({read(call, "op", op), read(call, "path", path)}); !s) {
    return session_error_answer(s.error());
  }
  if (op == "reset") {
    const Status done = session.reset();
    return done ? ok_answer(json::object()) : session_error_answer(done.error());
  }
  if (op == "stats") {
    const SessionStats stats = session.stats();
    return ok_answer(json{{"calls", stats.calls},
                          {"memory_kb", figure(stats.memory_kb)},
                          {"workspace_bytes", figure(stats.workspace_bytes)},
                          {"cpu_ms", figure(stats.cpu_ms)},
                          {"interpreter_alive", stats.interpreter_alive}});
  }
  if (op == "list") {
    Result<std::vector<WorkspaceEntry>> entries = session.list_files(path);
    if (!entries) return session_error_answer(entries.error());
    json out = json::array();
    for (const WorkspaceEntry& e : *entries) {
      // A name the code chose need not be UTF-8: it crosses as base64 when it is not.
      bool lossy = false;
      json entry{
          {"path", to_valid_utf8(e.path, &lossy)}, {"directory", e.directory}, {"size", e.size}};
      if (lossy) entry["path_base64"] = base64_encode(e.path);
      out.push_back(std::move(entry));
    }
    return ok_answer(std::move(out));
  }
  if (op == "read") {
    std::uint64_t max_bytes = 0;
    if (Status s = read(call, "max_bytes", max_bytes); !s) return session_error_answer(s.error());
    Result<std::string> content = session.read_file(path, max_bytes);
    if (!content) return session_error_answer(content.error());
    return ok_answer(json{{"content_base64", base64_encode(*content)}});
  }
  if (op == "write") {
    std::string encoded;
    if (Status s = read(call, "content_base64", encoded); !s)
      return session_error_answer(s.error());
    std::optional<std::string> bytes = base64_decode(encoded);
    if (!bytes) return session_error_answer(bad_call("content_base64 is not base64"));
    const Status written = session.write_file(path, *bytes);
    return written ? ok_answer(json::object()) : session_error_answer(written.error());
  }
  return session_error_answer(bad_call("unknown op '" + op + "'"));
}

Result<json> session_answer(const json& answer) {
  if (const auto ok = answer.is_object() ? answer.find("ok") : answer.end(); ok != answer.end()) {
    return *ok;
  }
  const json* error = member(answer, "error");
  if (error == nullptr || !error->is_object()) {
    return fail(ErrorCode::kPlugin, "a session answer has 'ok' or 'error': " + answer.dump());
  }
  const std::string code = error->value("code", std::string());
  ErrorCode named = ErrorCode::kPlugin;
  for (const ErrorCode c : kErrorCodes) {
    if (to_string(c) == code) named = c;
  }
  return fail(named, error->value("message", std::string("no message")));
}

Result<SessionStats> session_stats_from_json(const json& in) {
  SessionStats out;
  if (Status s = first_failure({read(in, "calls", out.calls), read(in, "memory_kb", out.memory_kb),
                                read(in, "workspace_bytes", out.workspace_bytes),
                                read(in, "cpu_ms", out.cpu_ms),
                                read(in, "interpreter_alive", out.interpreter_alive)});
      !s) {
    return fail(ErrorCode::kPlugin, "session stats: " + s.error().message);
  }
  return out;
}

Result<std::vector<WorkspaceEntry>> workspace_entries_from_json(const json& in) {
  if (!in.is_array()) return fail(ErrorCode::kPlugin, "a session listing is an array");
  std::vector<WorkspaceEntry> out;
  for (const json& item : in) {
    WorkspaceEntry e;
    std::string raw;
    if (Status s =
            first_failure({read(item, "path", e.path), read(item, "path_base64", raw),
                           read(item, "directory", e.directory), read(item, "size", e.size)});
        !s) {
      return fail(ErrorCode::kPlugin, "a session listing: " + s.error().message);
    }
    if (!raw.empty()) {
      std::optional<std::string> bytes = base64_decode(raw);
      if (!bytes) return fail(ErrorCode::kPlugin, "a session listing's path_base64 is not base64");
      e.path = std::move(*bytes);
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::string> file_content_from_json(const json& in) {
  std::string encoded;
  if (Status s = read(in, "content_base64", encoded); !s) {
    return fail(ErrorCode::kPlugin, "a session file: " + s.error().message);
  }
  std::optional<std::string> bytes = base64_decode(encoded);
  if (!bytes) return fail(ErrorCode::kPlugin, "a session file's content_base64 is not base64");
  return std::move(*bytes);
}

json session_error_answer(const Error& error) {
  return json{
      {"error", {{"code", to_string(error.code)}, {"message", to_valid_utf8(error.describe())}}}};
}

}  // namespace cordon::wire
