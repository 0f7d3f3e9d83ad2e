// A session on the container backend (issue #41, cordon/session.h): one container, started
// by ContainerBackend::open_session with the session's limits, whose init serves call after
// call (oci_init_channel.h, kSessionRun). Each call is a fresh process of that container in
// its working directory, /tmp: the bundle's scratch tmpfs of the session's workspace_bytes
// (over it, ENOSPC inside). Files persist; processes do not: when a call ends (its own end,
// its timeout, cancel or output cap) the init kills and reaps every process of the container
// but itself, and the container stays. Memory and processes are the container's cgroups for
// the session's whole life. Python calls go to a kept interpreter (cordon/kernel_call.h):
// the session kernel runs as the init's current order, its stdin connection the kernel's
// control socket, its stdout/stderr connections kept across calls; while it lives, other
// languages are fresh processes it starts (its sweep ends each call's other processes). A
// call's timeout, cancel or OOM, sys.exit() or a broken protocol ends the kernel's order
// (kEndRun: every process but the init): state_lost, files kept, the next python call
// starts a fresh kernel.
//
// A call's stdio are three unix connections the init makes to listeners cordon opens in the
// bundle's code/ directory for that call (no fd passing: runsc's host sockets carry none);
// each listener takes one connection from a process of the container and is removed before
// the init starts the code, while no other process of the container exists.
//
// The workspace's files from the host: cordon/session_workspace.h on an O_PATH fd of the
// bundle's scratch directory (the tmpfs), written as the sandbox's uid 65534.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "container_backend.h"
#include "cordon/run_driver.h"
#include "cordon/session.h"
#include "cordon/session_kernel.h"
#include "cordon/session_workspace.h"
#include "cordon/unique_fd.h"
#include "live_container.h"

namespace cordon::oci {

class ContainerSession final : public WorkspaceSession {
 public:
  // `backend` outlives the session; `container` was launched for it with `base`'s limits.
  // `proxy`: the session's allow-list's (none without a list).
  ContainerSession(ContainerBackend& backend, LiveContainer container, UniqueFd workspace,
                   ContainerBackend::BundleProxy proxy, RunRequest base);
  ContainerSession(const ContainerSession&) = delete;
  ContainerSession& operator=(const ContainerSession&) = delete;
  // Closes: the init exits on EOF (the container with it), then the runtime's container,
  // the cgroups, the scratch mount and the bundle are removed.
  ~ContainerSession() override;

  // interpreter_alive: a python kernel is kept now.
  [[nodiscard]] SessionStats stats() override;
  [[nodiscard]] std::optional<SessionLoss> loss() override;
  // Ends the kept kernel, if any (the next python call starts a fresh one); files kept.
  [[nodiscard]] Status reset() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;

  // The runtime's id of the session's container (tests look for it on the host).
  [[nodiscard]] std::string container_id() const { return container_.id(); }

 private:
  // The call's code file and input files, before its order.
  [[nodiscard]] Status place_call_files(const RunPayload& payload, const RunRequest& call);
  // Sends `payload` as the init's next kSessionRun order and takes the three stdio
  // connections it makes for it (stdin, stdout, stderr), waiting until `until`.
  [[nodiscard]] Result<std::array<UniqueFd, 3>> start_order(const RunPayload& payload,
                                                            std::chrono::milliseconds backstop,
                                                            Clock::time_point until);
  // A call through the kept python kernel (started first when none lives): python cells in
  // one namespace, other languages a fresh process the kernel starts (kernel_call.h).
  [[nodiscard]] RunResult run_in_kernel(const RunRequest& call, const RunPayload& payload,
                                        RunSetup& setup, RunFrame frame, const CancelToken& cancel);
  // Ends the kernel's order (StartedKernel::end): kEndRun once `kill_at` passed, then the
  // init's report; the kernel's wait status when known.
  std::optional<int> end_kernel(RunClock::time_point kill_at, RunClock::time_point until);
  void drop_kernel();

  ContainerBackend& backend_;
  LiveContainer container_;
  // The allow-list's proxy for the session's life (stopped after the destructor's body
  // removed the container) and where the last call's report of it ended.
  ContainerBackend::BundleProxy proxy_;
  net::RunNetwork::CallMark reported_;
  RunRequest base_;
  std::int64_t calls_ = 0;
  std::int64_t cpu_us_ = 0;       // the calls' CPU time so far, from the container's group
  std::int64_t tree_cpu_us_ = 0;  // the init's reaped-CPU figure at the last call's end
  // The kept python kernel, while one lives: its client (stdin connection) and output.
  std::optional<KernelClient> kernel_;
  UniqueFd kernel_out_;
  UniqueFd kernel_err_;
  // Why the container is gone, when it is (its init ended: an OOM kill of it, gVisor's
  // sandbox dying): every later call fails with it.
  std::string lost_;
};

}  // namespace cordon::oci
