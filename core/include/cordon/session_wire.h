// The JSON of a session across the C plugin boundary (plugin_abi.h, ABI 3.4): the options a
// session is opened with, and the `session_call` operations (reset, stats, list, read,
// write) with their answers. Both sides use these: the plugin side's serve_session_call()
// answers a call on a BackendSession, the loader's PluginSession (plugin_backend.cpp) asks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "cordon/session.h"

namespace cordon::wire {

[[nodiscard]] nlohmann::json to_json(const SessionOptions& options);
[[nodiscard]] Result<SessionOptions> session_options_from_json(const nlohmann::json& in);

// The calls, as the loader writes them.
[[nodiscard]] nlohmann::json session_reset_call();
[[nodiscard]] nlohmann::json session_stats_call();
[[nodiscard]] nlohmann::json session_list_call(std::string_view dir);
[[nodiscard]] nlohmann::json session_read_call(std::string_view path, std::uint64_t max_bytes);
[[nodiscard]] nlohmann::json session_write_call(std::string_view path, std::string_view bytes);

// The plugin side: runs `call` on `session` and returns the answer, {"ok": ...} or
// {"error": {"code", "message"}}; an unknown or malformed call is an invalid_argument
// error. Never throws for a bad call.
[[nodiscard]] nlohmann::json serve_session_call(BackendSession& session,
                                                const nlohmann::json& call);

// An answer of `error`, as serve_session_call() gives one (`cordon session`'s holder answers
// its own refusals in the same shape).
[[nodiscard]] nlohmann::json session_error_answer(const Error& error);

// The loader side: an answer's "ok" payload, or its error (the plugin's code kept: a
// refusal of the caller's input stays kInvalidArgument, kNotFound, kUnavailable); an answer
// of neither shape is a kPlugin error.
[[nodiscard]] Result<nlohmann::json> session_answer(const nlohmann::json& answer);
[[nodiscard]] Result<SessionStats> session_stats_from_json(const nlohmann::json& in);
[[nodiscard]] Result<std::vector<WorkspaceEntry>> workspace_entries_from_json(
    const nlohmann::json& in);
[[nodiscard]] Result<std::string> file_content_from_json(const nlohmann::json& in);

}  // namespace cordon::wire
