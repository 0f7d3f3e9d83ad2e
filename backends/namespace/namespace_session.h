// A session on the namespace backend (issue #41, session.h): one sandbox built by
// NamespaceBackend::build_session, its init in session mode, serving call after call. The
// calls' working directory is /tmp (a tmpfs of the session's workspace_bytes: over it,
// ENOSPC inside); files persist. The limit group is the session's: memory kept by one call
// counts in the next.
//
// Every call goes to the session's python kernel (sandbox_kernel.h), the init's current
// run, started when the session opens (start_kernel: the first call is warm) and again at
// the call after one that lost it (NamespaceBackend::run_in_kernel): a python call is a
// cell in the kernel's namespace (variables, imports and data persist; a trailing
// expression is the value), any other language a fresh process the kernel starts (shell
// variables do not persist). A call that times out, is cancelled, hits the memory limit or
// loses the kernel otherwise ends every process of the kernel's run: the files stay, the
// result says state_lost, and the next call starts a fresh kernel. reset() does the same.
//
// The sandbox is built on the session's own thread (keeper_thread.h), which lives as long as
// the session: it outlives the thread that opened it and still dies with cordon (and, should
// cordon die, the init's control socket closes: it exits, the namespace with it).
//
// A session of the default shape may have been built ahead, kernel and all, by the backend's
// session pool (NamespaceBackend::open_session): handed out once, never back to the pool.
//
// The workspace's files are read and written from the host through an O_PATH fd of the
// sandbox's /tmp (cordon/session_workspace.h: openat2 beneath it, no link followed, regular
// files only, written as the sandbox's user).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/session.h"
#include "cordon/session_workspace.h"
#include "cordon/unique_fd.h"
#include "keeper_thread.h"
#include "namespace_backend.h"
#include "sandbox_kernel.h"

namespace cordon::ns {

class NamespaceSession final : public WorkspaceSession {
 public:
  // `backend` outlives the session; `keeper`: the thread that built the sandbox (its
  // processes die with it); `workspace`: the O_PATH fd of the sandbox's /tmp.
  // `network`: the session's allow-list's proxy (none without a list).
  NamespaceSession(NamespaceBackend& backend, std::unique_ptr<KeeperThread> keeper,
                   BuiltSandbox sandbox, UniqueFd workspace, SessionNetwork network,
                   RunRequest base);
  // Closes the control socket (the init exits, the namespace with it), reaps, removes the
  // limit group.
  ~NamespaceSession() override;
  NamespaceSession(const NamespaceSession&) = delete;
  NamespaceSession& operator=(const NamespaceSession&) = delete;

  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;
  // Ends the kernel (every process of its run), files kept; the next call starts another.
  [[nodiscard]] Status reset() override;
  [[nodiscard]] SessionStats stats() override;
  // Once the session's init has died (the OOM killer, most likely: nothing else of the code
  // can reach it).
  [[nodiscard]] std::optional<SessionLoss> loss() override;

  // Starts the kernel for calls of the session's options and waits until it answers, until
  // `until` (NamespaceBackend::open_session, and the session pool's builds).
  [[nodiscard]] Status start_kernel(std::chrono::steady_clock::time_point until);
  // Whether its sandbox and kernel still live (a pooled session that died while it waited
  // is not handed out).
  [[nodiscard]] bool warm();
  // A pooled session handed out: the options it is opened with (which fit the pool's shape:
  // the same sandbox, limit group, workspace and kernel) replace the pool's.
  void adopt(RunRequest base) { base_ = std::move(base); }
  [[nodiscard]] pid_t init_pid() const { return sandbox_.process.init_pid(); }  // tests

 private:
  NamespaceBackend& backend_;
  // Before the sandbox: it ends (and with it what it cloned) only once the sandbox is gone.
  std::unique_ptr<KeeperThread> keeper_;
  BuiltSandbox sandbox_;
  // Stopped as a member, after the destructor's body ended every process of the sandbox.
  SessionNetwork network_;
  RunRequest base_;
  std::optional<SandboxKernel> kernel_;  // the init's current run while it lives
  std::int64_t calls_ = 0;
};

}  // namespace cordon::ns
