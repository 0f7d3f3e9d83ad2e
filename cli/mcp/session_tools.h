// The session tools of `cordon mcp` (issue #41): session_open, session_reset, session_close,
// session_files, session_read_file, session_write_file, and run_code's `session` argument.
// Their arguments are checked here, at once, against the served inputSchema; the work runs
// on a call queue worker (a SessionOperation), through the server's SessionRegistry, as the
// calling MCP session's owner: another client's id is "no such session".
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "cordon/request.h"
#include "mcp/call_job.h"

namespace cordon::cli::mcp {

class Service;

// What an MCP session's sandbox sessions were opened with, for its run_code calls that name
// no language or timeout. Bounded: an entry goes with session_close, and entries of
// sessions that ended otherwise are dropped once as many are kept as the server holds.
class SessionBook {
 public:
  struct Defaults {
    Language language = Language::kSh;
    std::chrono::milliseconds timeout{kDefaultTimeout};
  };
  void remember(const std::string& id, Defaults defaults, Service& service,
                const std::string& owner);
  void forget(const std::string& id);
  [[nodiscard]] std::optional<Defaults> find(const std::string& id) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Defaults, std::less<>> sessions_;
};

// Whether `name` is one of the session tools.
[[nodiscard]] bool is_session_tool(std::string_view name);

// A session tool's call: its arguments checked against its served inputSchema, then the
// work for a worker. kInvalidArgument (a bad argument) or kUnavailable (no sessions here):
// the caller answers with the message as a tool error, nothing ran.
[[nodiscard]] Result<SessionOperation> session_tool_call(Service& service, std::string_view name,
                                                         const nlohmann::json& arguments,
                                                         const std::string& owner, bool structured,
                                                         SessionBook& book);

// run_code's `session`, when given: the target, with `request`'s language and timeout the
// session's where the call names none (`arguments` as the model sent them). files and
// collect are refused in a session (its files are the workspace's). nullopt: a one-shot call.
[[nodiscard]] Result<std::optional<SessionTarget>> session_of_run(const nlohmann::json& arguments,
                                                                  const std::string& owner,
                                                                  const SessionBook& book,
                                                                  RunRequest& request);

}  // namespace cordon::cli::mcp
