// A session's workspace from the host (issue #41, session.h): the list, read and write
// operations every backend's BackendSession offers, on an O_PATH fd of the workspace's
// directory, written once.
//
// Every path is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS) beneath that fd: no path leaves it ("..", absolute), no link the
// code planted is followed, and only regular files are opened for data (a FIFO is refused,
// never blocked on). Sizes are bounded by the caller. Written files and directories belong to
// the sandbox's user: this thread's filesystem ids are that user's while it writes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/session.h"
#include "cordon/unique_fd.h"

namespace cordon {

// The entries of `dir` ("" or "." for the top) beneath `workspace`; a link or anything
// not a regular file is listed with size 0, never followed.
[[nodiscard]] Result<std::vector<WorkspaceEntry>> list_workspace(int workspace,
                                                                 std::string_view dir);
// The regular file `path`, at most `max_bytes` (a larger one is refused with its size).
[[nodiscard]] Result<std::string> read_workspace_file(int workspace, std::string_view path,
                                                      std::uint64_t max_bytes);
// Creates or replaces the regular file `path` (parents made) as `uid`:`gid`.
[[nodiscard]] Status write_workspace_file(int workspace, std::string_view path,
                                          std::string_view bytes, uid_t uid, gid_t gid);
// Bytes in use on the workspace's filesystem (its quota's tmpfs), when it can be read.
[[nodiscard]] std::optional<std::int64_t> workspace_bytes_used(int workspace);

// `request` as a call of a session opened with `base`: its memory, processes and workspace
// are the session's, whatever it asked, and so is its allow-list when it names none (one it
// names is the backend's to refuse unless it is the session's: the proxy is the session's).
[[nodiscard]] inline RunRequest as_session_call(RunRequest request, const RunRequest& base) {
  request.limits.memory_bytes = base.limits.memory_bytes;
  request.limits.max_processes = base.limits.max_processes;
  request.limits.scratch_bytes = base.limits.scratch_bytes;
  if (!request.network.any()) request.network = base.network;
  return request;
}

// A session's calls have its allow-list, and only that (its proxy, and what the proxy's
// limits counted, are the session's): why `call` (as_session_call's) is refused when it
// names another than `session`'s, else nothing.
[[nodiscard]] inline std::optional<std::string> other_list_refusal(const NetworkAccess& call,
                                                                   const NetworkAccess& session) {
  if (!call.any() || call == session) return std::nullopt;
  return "a session's calls have the allow-list the session was opened with; open another "
         "session for another list";
}

// A BackendSession whose workspace the host reaches through an O_PATH fd of its directory:
// the file operations above, and the common part of stats(), once for every backend.
class WorkspaceSession : public BackendSession {
 public:
  // `workspace`: the O_PATH fd; files are written as `uid`:`gid`, the sandbox's user.
  WorkspaceSession(UniqueFd workspace, uid_t uid, gid_t gid)
      : workspace_(std::move(workspace)), uid_(uid), gid_(gid) {}

  [[nodiscard]] Result<std::vector<WorkspaceEntry>> list_files(std::string_view dir) final {
    return list_workspace(workspace_.get(), dir);
  }
  [[nodiscard]] Result<std::string> read_file(std::string_view path,
                                              std::uint64_t max_bytes) final {
    return read_workspace_file(workspace_.get(), path, max_bytes);
  }
  [[nodiscard]] Status write_file(std::string_view path, std::string_view bytes) final {
    return write_workspace_file(workspace_.get(), path, bytes, uid_, gid_);
  }

 protected:
  // calls and CPU time as the backend counted them (unset: not measured, which a front end
  // says rather than show 0), memory from its group's `usage`, and the workspace's bytes in
  // use.
  [[nodiscard]] SessionStats workspace_stats(std::int64_t calls, std::optional<std::int64_t> cpu_ms,
                                             const std::optional<ResourceSample>& usage) const {
    SessionStats s;
    s.calls = calls;
    s.cpu_ms = cpu_ms;
    if (usage && usage->memory_bytes) {
      s.memory_kb = static_cast<std::int64_t>(*usage->memory_bytes / 1024);
    }
    s.workspace_bytes = workspace_bytes_used(workspace_.get());
    return s;
  }
  // Before what holds the workspace is removed (an unmount would find it busy).
  void close_workspace() { workspace_.reset(); }
  [[nodiscard]] int workspace_fd() const { return workspace_.get(); }

 private:
  UniqueFd workspace_;
  uid_t uid_;
  gid_t gid_;
};

}  // namespace cordon
