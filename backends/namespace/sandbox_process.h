// The parent side of one sandbox: clone the set-up process into its namespaces, write its
// id maps, put it in its limit groups, let it go, and wait until the code runs; later,
// kill it (the PID namespace's init: the kernel kills the rest) and collect its report.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "child_setup.h"
#include "cordon/error.h"
#include "cordon/proc/limit_group.h"
#include "cordon/proc/spawn.h"
#include "cordon/run_driver.h"
#include "cordon/unique_fd.h"
#include "init_protocol.h"
#include "sandbox_plan.h"

namespace cordon::ns {

struct SandboxStart {
  const SandboxPlan* plan = nullptr;
  const policy::SeccompProgram* seccomp = nullptr;
  int init_exe_fd = -1;  // O_PATH fd of cordon-ns-init
  int stdin_fd = -1;     // -1: /dev/null
  int stdout_fd = -1;
  int stderr_fd = -1;
  const proc::LimitGroup* limits = nullptr;  // joined before the code starts; may be null
  bool want_tmp_fd = false;                  // keep the sandbox's /tmp for artifacts
};

struct SandboxExit {
  proc::ExitInfo init;               // how the namespace's init ended
  std::optional<InitReport> report;  // the main process's status, unless init was killed
};

class SandboxProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Returns once the code has been exec'd, or fails with the child-side step and errno
  // ("mount: bind /tmp/usr <- /usr: Operation not permitted"); gives up at `until`.
  [[nodiscard]] static Result<SandboxProcess> start(const SandboxStart& args,
                                                    Clock::time_point until);

  SandboxProcess() = default;
  SandboxProcess(SandboxProcess&&) noexcept = default;
  SandboxProcess& operator=(SandboxProcess&&) noexcept = default;

  // Readable once the namespace's init has exited: the main process ended (init exits
  // right after it) or the sandbox was killed.
  [[nodiscard]] int exit_fd() const { return init_.pidfd(); }
  [[nodiscard]] pid_t init_pid() const { return init_.pid(); }
  // SIGKILL to the init: the kernel kills every process of the PID namespace.
  void kill() const;
  // Waits for the init (bounded: SIGKILL at `until`) and reads its report.
  [[nodiscard]] Result<SandboxExit> finish(Clock::time_point until);
  // The sandbox's /tmp (O_PATH), if asked for; valid after the namespace is gone.
  [[nodiscard]] UniqueFd take_tmp_fd() { return std::move(tmp_); }

 private:
  proc::ChildProcess init_;  // destructor: SIGKILL and reap, on every error path
  UniqueFd report_;
  UniqueFd tmp_;
};

// A started sandbox and its limit groups, as the shared driver sees them
// (cordon/run_driver.h): killing the PID namespace's init kills the sandbox; how the code
// ended comes from the init's report, and from the limit groups' OOM and pids counts.
class SandboxTree final : public StartedTree {
 public:
  SandboxTree(std::optional<proc::LimitGroup> limits, SandboxProcess sandbox)
      : limits_(std::move(limits)), sandbox_(std::move(sandbox)) {}

  [[nodiscard]] int exit_fd() const override { return sandbox_.exit_fd(); }
  void kill() override { sandbox_.kill(); }
  [[nodiscard]] Status finish(RunClock::time_point until) override;
  [[nodiscard]] Status describe_end(Termination& t, RunResult& result) override;
  // The sandbox's /tmp, kept open past the namespace's end.
  [[nodiscard]] Result<std::filesystem::path> artifact_dir() override;
  // The limit groups (the namespace is already gone).
  [[nodiscard]] Status teardown(RunClock::time_point until) override;
  // The limit groups' memory and CPU use now (none without a memory or CPU group).
  [[nodiscard]] std::optional<ResourceSample> sample() const override {
    return limits_ ? limits_->usage() : std::nullopt;
  }

 private:
  // Declared before sandbox_: the sandbox is killed and reaped before its groups go.
  std::optional<proc::LimitGroup> limits_;
  SandboxProcess sandbox_;
  SandboxExit exit_;
  UniqueFd tmp_;
};

}  // namespace cordon::ns
