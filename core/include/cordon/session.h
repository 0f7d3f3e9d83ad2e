// Sessions (issue #41): one sandbox kept alive across calls, for one agent.
//
// A backend that can hold a session returns a BackendSession from Backend::open_session();
// the default refuses with the reason. What a session keeps and what it does not:
//  - its workspace (the calls' working directory): files written by one call are there for
//    the next, bounded by `workspace_bytes` (over it a write fails with ENOSPC inside);
//  - for python, a persistent interpreter: globals, imports and loaded data survive between
//    calls, and a trailing expression's repr is the call's RunResult::value; sh, bash and
//    the other interpreters start a fresh process per call in the same sandbox;
//  - the session's limits hold for its whole life (memory and processes are one group, the
//    allow-list's byte and connection limits count across calls); per call, as one-shot:
//    the timeout, the output cap and stdin;
//  - a call that times out, is cancelled or hits the memory limit kills every process of
//    the call, the interpreter too: the session keeps its files, the next call gets a fresh
//    interpreter, and the failed call's result says state_lost.
// One call at a time: the caller (frontend/session_registry.h) serialises calls; a
// BackendSession is used by one thread at a time, except cancel tokens and close.
//
// Nothing one session does may reach another session, the host, or a later one-shot call
// (the audit's cross-session attempts prove it per backend).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon {

inline constexpr std::uint64_t kDefaultWorkspaceBytes = 256ULL << 20;
// What a call with state_lost means, in words a model can act on (every front end says it so).
inline constexpr std::string_view kStateLostWords =
    "the interpreter was restarted: variables are gone, files are kept";
// The largest repr a call's value carries; longer ones are cut and marked.
inline constexpr std::size_t kMaxSessionValueBytes = 64U << 10;

// What a session is opened with: the options a call takes, fixed for the session's life.
struct SessionOptions {
  // language: the session's default (python keeps an interpreter); limits: memory and
  // processes for the whole session, timeout and output as each call's default; env,
  // network (the allow-list), environment: as a one-shot call's. code, stdin_data,
  // input_files and artifacts are not read.
  RunRequest base;
  std::uint64_t workspace_bytes = kDefaultWorkspaceBytes;
};

// A file or directory of a session's workspace, as listed.
struct WorkspaceEntry {
  std::string path;  // relative to the workspace, '/'-separated
  bool directory = false;
  std::uint64_t size = 0;
  bool operator==(const WorkspaceEntry&) const = default;
};

// What a session holds now (`cordon session ls`, the inspector's panel).
struct SessionStats {
  std::int64_t calls = 0;                       // calls run so far
  std::optional<std::int64_t> memory_kb;        // the session's group now, when measured
  std::optional<std::int64_t> workspace_bytes;  // bytes used in the workspace, when measured
  std::optional<std::int64_t> cpu_ms;           // CPU time of the session's calls, when measured
  bool interpreter_alive = false;               // a python interpreter is kept now
};

// Why a session's sandbox is gone on its own (its init died: an OOM kill of it, the
// runtime's sandbox failing), once it is: every later call would fail with `reason`.
struct SessionLoss {
  bool oom = false;  // the session's memory limit had the kernel's OOM killer at work
  std::string reason;
  // How a front end says the session ended: "ended out of memory: <reason>".
  [[nodiscard]] std::string words() const {
    return (oom ? "ended out of memory: " : "ended: ") + reason;
  }
};

class BackendSession {
 public:
  BackendSession() = default;
  BackendSession(const BackendSession&) = delete;
  BackendSession& operator=(const BackendSession&) = delete;
  // Closes: every process of the session is killed and everything it made on the host
  // (groups, mounts, directories) is removed.
  virtual ~BackendSession() = default;

  // One call in the session; the request's code, language, timeout, stdin and output cap
  // are this call's (its memory and process limits are the session's, and a request that
  // asks for others is refused). Never throws; a failure is a RunResult (kSandboxError),
  // and a session whose sandbox itself is gone fails every later call with the reason.
  // Sets RunResult::value and state_lost; the front end sets RunResult::session.
  [[nodiscard]] virtual RunResult run(const RunRequest& request, const CancelToken& cancel,
                                      RunObserver* observer) = 0;
  // A fresh interpreter, files kept.
  [[nodiscard]] virtual Status reset() = 0;
  [[nodiscard]] virtual SessionStats stats() = 0;
  // Set once the sandbox itself is gone (checked after each call): a front end then ends the
  // session, saying why, rather than keep a session every call of which fails.
  [[nodiscard]] virtual std::optional<SessionLoss> loss() { return std::nullopt; }

  // The workspace, from the host: no path outside it ("..", absolute), no link followed
  // (links the code planted are listed as files of size 0, never read through).
  [[nodiscard]] virtual Result<std::vector<WorkspaceEntry>> list_files(std::string_view dir) = 0;
  // At most `max_bytes`; a larger file is refused with its size.
  [[nodiscard]] virtual Result<std::string> read_file(std::string_view path,
                                                      std::uint64_t max_bytes) = 0;
  // Creates or replaces a file (parents made), owned by the sandbox's user; counts against
  // the workspace's quota.
  [[nodiscard]] virtual Status write_file(std::string_view path, std::string_view bytes) = 0;
};

}  // namespace cordon
