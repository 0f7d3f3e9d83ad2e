// A session's python kernel (issue #41, cordon/session_kernel.h) in a namespace sandbox: the
// session init's current run, launched as a kSessionRun order whose stdin is the kernel's
// control socket and whose stdout and stderr are pipes kept for the kernel's life. While it
// lives every call of the session goes to it (cordon/kernel_call.h); ending it is ending
// that run: the init kills every process of it and reports, the sandbox and its files stay.
//
// The kernel runs the code, so nothing it says is trusted beyond KernelClient's checks: the
// host's deadline, cancel and the end of the run are the host's own.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cordon/claims.h"
#include "cordon/error.h"
#include "cordon/net/run_network.h"
#include "cordon/proc/init_protocol.h"
#include "cordon/proc/limit_group.h"
#include "cordon/session_kernel.h"
#include "cordon/unique_fd.h"
#include "sandbox_plan.h"
#include "sandbox_process.h"

namespace cordon::ns {

class SandboxKernel {
 public:
  using Clock = std::chrono::steady_clock;

  // Launches the kernel in `sandbox` (a session's, between runs) with `plan`'s interpreter
  // (python), environment, working directory and rlimits; its argv becomes kernel_argv()
  // with the sweep asked for (the host's PID namespace named, so the kernel never sweeps
  // there). With `network` (a session with an allow-list), the init relays
  // 127.0.0.1:kProxyPort to the session's proxy for the kernel's run (a new kernel, a new
  // relay: the proxy, and what it counted, stay the session's).
  [[nodiscard]] static Result<SandboxKernel> launch(SandboxProcess& sandbox, SandboxPlan plan,
                                                    const net::RunNetwork* network = nullptr);

  // Waits until the kernel answers an empty cell (its interpreter is up and reading), until
  // `until`: a kernel started ahead of its first call (at the session's open, or by the
  // session pool) is then warm. A failure loses the kernel.
  [[nodiscard]] Status wait_ready(Clock::time_point until);

  // Ends the kernel's run: until `kill_at` the kernel may end on its own (it closed its
  // channel), then the init is asked to end the run (every process of it, by SIGKILL);
  // the init's report, waited for until `until`. *asked: whether the host ended it.
  [[nodiscard]] static Result<init::Report> end(SandboxProcess& sandbox, Clock::time_point kill_at,
                                                Clock::time_point until, bool* asked);

  [[nodiscard]] KernelClient& client() { return client_; }
  [[nodiscard]] int stdout_fd() const { return out_.get(); }
  [[nodiscard]] int stderr_fd() const { return err_.get(); }
  // What it was started with (its argv the kernel's): a kernel started before its first call
  // serves it only if that call would have started it alike (same_start).
  [[nodiscard]] const SandboxPlan& plan() const { return plan_; }
  // Whether a call of the session has gone to it yet (mark_used).
  [[nodiscard]] bool used() const { return used_; }
  void mark_used() { used_ = true; }

  // What the host keeps from one of this kernel's calls for the next (run_in_kernel), so
  // that a warm call, tens of microseconds, is not mostly the host's bookkeeping:
  // - the session's limit-group stats read after the last call, which are the next call's
  //   "before" (the kernel ends every other process before it answers, so nothing of the
  //   session runs between calls; a new kernel starts without them, its start not counted);
  // - the last call's declaration (the session's groups are fixed, so only a call's own
  //   limits change it), with the limits it was made for.
  struct CallMemo {
    std::optional<proc::LimitGroupStats> stats;
    std::optional<Limits> limits;
    std::string timeout_mechanism;
    std::vector<Enforced> enforced;
  };
  [[nodiscard]] CallMemo& memo() { return memo_; }

 private:
  SandboxKernel(SandboxPlan plan, KernelClient client, UniqueFd out, UniqueFd err)
      : plan_(std::move(plan)),
        client_(std::move(client)),
        out_(std::move(out)),
        err_(std::move(err)) {}

  SandboxPlan plan_;
  bool used_ = false;
  CallMemo memo_;
  KernelClient client_;
  UniqueFd out_;  // the read ends of the kernel's fd 1 and 2
  UniqueFd err_;
};

}  // namespace cordon::ns
