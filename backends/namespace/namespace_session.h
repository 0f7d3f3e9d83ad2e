// A session on the namespace backend (issue #41, session.h): one sandbox built by
// NamespaceBackend::build_session, its init in session mode, serving call after call. Each
// call is a fresh process in the sandbox's working directory, /tmp (a tmpfs of the
// session's workspace_bytes: over it, ENOSPC inside); files persist, processes do not. The
// limit group is the session's. A python call is, for now, a fresh `python3 -c` too (no
// value, state_lost meaningless): a persistent kernel would be a run order that stays
// running (launch_session once, its calls over its socket, run_in_session's SessionCallTree
// ending it at a timeout: state_lost, the next call launching a new kernel).
//
// The workspace's files are read and written from the host through an O_PATH fd of the
// sandbox's /tmp (cordon/session_workspace.h: openat2 beneath it, no link followed, regular
// files only, written as the sandbox's user).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/session.h"
#include "cordon/session_workspace.h"
#include "cordon/unique_fd.h"
#include "namespace_backend.h"

namespace cordon::ns {

class NamespaceSession final : public WorkspaceSession {
 public:
  // `backend` outlives the session; `workspace`: the O_PATH fd of the sandbox's /tmp.
  NamespaceSession(NamespaceBackend& backend, BuiltSandbox sandbox, UniqueFd workspace,
                   RunRequest base);
  // Closes the control socket (the init exits, the namespace with it), reaps, removes the
  // limit group.
  ~NamespaceSession() override;
  NamespaceSession(const NamespaceSession&) = delete;
  NamespaceSession& operator=(const NamespaceSession&) = delete;

  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;
  // No interpreter is kept between calls (yet): nothing to restart, files kept.
  [[nodiscard]] Status reset() override { return {}; }
  [[nodiscard]] SessionStats stats() override;

 private:
  NamespaceBackend& backend_;
  BuiltSandbox sandbox_;
  RunRequest base_;
  std::int64_t tree_cpu_us_ = 0;
  std::int64_t calls_ = 0;
};

}  // namespace cordon::ns
