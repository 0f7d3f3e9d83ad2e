// The parent side of one sandbox: clone the set-up process into its namespaces, write its
// id maps, put it in its limit groups, let it go, and wait until its init is ready; then
// hand it the code (launch); later, kill it (the PID namespace's init: the kernel kills
// the rest) and collect its report. Building and launching are apart so that a sandbox
// can be built before its run is known (a warm pool).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "child_setup.h"
#include "cordon/error.h"
#include "cordon/policy/seccomp_compiler.h"
#include "cordon/proc/limit_group.h"
#include "cordon/proc/ns_init_channel.h"
#include "cordon/proc/spawn.h"
#include "cordon/run_driver.h"
#include "cordon/unique_fd.h"
#include "sandbox_plan.h"
#include "setup_spawner.h"

namespace cordon::ns {

struct SandboxStart {
  const SandboxPlan* plan = nullptr;                // its files are written by the set-up process
  const policy::SeccompProgram* seccomp = nullptr;  // installed before the init's exec
  int init_exe_fd = -1;                             // O_PATH fd of cordon-ns-init
  const proc::LimitGroup* limits = nullptr;         // joined before the init starts; may be null
  bool want_tmp_fd = false;                         // keep the sandbox's /tmp for artifacts
  void (*before_go_for_test)(pid_t) = nullptr;      // NamespaceOptions::before_go_for_test
  // Clones the set-up process instead of this process (setup_spawner.h); null, or gone
  // (kUnavailable), and this process clones it: the same set-up either way.
  SetupSpawner* spawner = nullptr;
};

// The code's part of a plan, for the init of a built sandbox.
struct CodeOrder {
  const SandboxPlan* plan = nullptr;  // executable, argv, env, cwd, rlimits
  bool write_files = false;           // the plan's files, by the init (a sandbox built before them)
  // Hand argv[2] (the code of `python3 -c code`) to the interpreter prestart() started,
  // instead of starting the plan's command; the plan's other fields are then ignored.
  bool prestarted = false;
  int stdin_fd = -1;  // -1: /dev/null
  int stdout_fd = -1;
  int stderr_fd = -1;
  // The egress proxy's relay (init_protocol.h's kRelay): the init listens on
  // 127.0.0.1:relay_port and relays to `relay_socket` in the directory `relay_dir_fd`
  // (passed with the order: the sandbox may predate the socket). 0: none.
  std::uint16_t relay_port = 0;
  int relay_dir_fd = -1;
  std::string relay_socket;
  // A prestart order's library for the interpreter to preload from fd 5 (a shell's:
  // ns_init_channel.h's kPrestartPreloadFd); -1: none.
  int preload_fd = -1;
};

struct SandboxExit {
  proc::ExitInfo init;                 // how the namespace's init ended (if it was reaped)
  std::optional<init::Report> report;  // the main process's status, unless init was killed
  bool init_reaped = true;             // false: finished on the report, the init not ended yet
};

class SandboxProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Returns once the sandbox is built and its init waits for the code, or fails with the
  // child-side step and errno ("mount: bind /tmp/usr <- /usr: Operation not permitted");
  // gives up at `until`.
  [[nodiscard]] static Result<SandboxProcess> start(const SandboxStart& args,
                                                    Clock::time_point until);
  // Has the init start `order`'s command now (the interpreter with the loader of
  // prestart_loader.h; no files), its code to come with launch(); returns once it is
  // exec'd, or fails with the stage and errno, or gives up at `until`. Before launch only.
  [[nodiscard]] Status prestart(const CodeOrder& order, Clock::time_point until);
  // Hands the code to the init, without waiting for it to start (the wait for the code's
  // end covers that). A sandbox whose init is gone (killed while it waited) fails with
  // kUnavailable. Once only.
  [[nodiscard]] Status launch(const CodeOrder& order);
  // Once the init has exited: why the code could not start, if that is why it exited
  // ("start the code: execve the code: No such file or directory").
  [[nodiscard]] std::optional<std::string> start_failure();

  // ---- A session's sandbox (ns_init_channel.h, kSessionRun): order after order. ----
  // Hands a call's code to the init of a session's sandbox (the plan's command, files by
  // the init when write_files); the first one puts the init in session mode. One run at a
  // time: the next after this run's report (session_report).
  [[nodiscard]] Status launch_session(const CodeOrder& order);
  // Asks the init to end the current run now: it kills every process of the run (the
  // main one by SIGKILL) and reports as if the main process had ended. The sandbox stays.
  [[nodiscard]] Status end_session_run();
  // Waits for the current run's report until `until` (kTimeout); kUnavailable when the
  // init is gone (the session ended: OOM-killed, or its order failed).
  [[nodiscard]] Result<init::Report> session_report(Clock::time_point until);
  // Gives the session up: EOF on the control socket makes the init exit (the namespace
  // with it); reaped, killed at `until`.
  [[nodiscard]] Result<proc::ExitInfo> close_session(Clock::time_point until);

  SandboxProcess() = default;
  SandboxProcess(SandboxProcess&&) noexcept = default;
  SandboxProcess& operator=(SandboxProcess&&) noexcept = default;

  // Readable once the init has reported (the main process ended and nothing of the code
  // is left; the init then waits to be killed) or died (killed, or the sandbox failed).
  [[nodiscard]] int exit_fd() const { return report_.get(); }
  // Finish on the init's report without ending the init: its end (the namespaces'
  // teardown, ~0.3 ms and an RCU grace period here) is left to whoever destroys the
  // sandbox later (a warm pool's thread, once the result is out).
  void set_report_first(bool on) { report_first_ = on; }
  // Whether the init's complete report (everything reaped) has come; reads it if it is
  // there, without waiting.
  [[nodiscard]] bool reported();
  [[nodiscard]] pid_t init_pid() const { return init_.pid(); }
  // Whether the init has exited (its pidfd is readable), without waiting or reaping.
  [[nodiscard]] bool init_exited() const;
  // SIGKILL to the init: the kernel kills every process of the PID namespace.
  void kill() const;
  // Ends the init (SIGKILL once it has reported, or at `until`), reaps it and reads its
  // report. With report_first and a complete report at hand, returns at once without
  // ending the init (init_reaped false); the destructor kills and reaps it.
  [[nodiscard]] Result<SandboxExit> finish(Clock::time_point until);
  // The sandbox's /tmp (O_PATH), if asked for; valid after the namespace is gone.
  [[nodiscard]] UniqueFd take_tmp_fd() { return std::move(tmp_); }

 private:
  [[nodiscard]] Status send_order(OrderKind kind, const CodeOrder& order);

  proc::ChildProcess init_;  // destructor: SIGKILL and reap, on every error path
  UniqueFd control_;         // the init's control socket (init_protocol.h)
  bool launched_ = false;
  bool report_first_ = false;
  std::vector<std::string> file_paths_;  // the files the init writes, for its errors
  UniqueFd report_;
  std::optional<init::Report> report_read_;  // once read from report_
  UniqueFd tmp_;
};

// A started sandbox and its limit groups, as the shared driver sees them
// (cordon/run_driver.h): killing the PID namespace's init kills the sandbox; how the code
// ended comes from the init's report, and from the limit groups' OOM and pids counts.
class SandboxTree final : public StartedTree {
 public:
  // Takes a sandbox and its limit groups to remove once the init is reaped.
  using Retire = std::function<void(SandboxProcess, std::optional<proc::LimitGroup>)>;

  SandboxTree(std::optional<proc::LimitGroup> limits, SandboxProcess sandbox)
      : limits_(std::move(limits)), sandbox_(std::move(sandbox)) {}
  // With a retire hook the tree finishes on the init's report and hands the exiting init
  // and its groups to the hook in teardown() instead of waiting for them.
  void retire_with(Retire retire) {
    retire_ = std::move(retire);
    sandbox_.set_report_first(static_cast<bool>(retire_));
  }

  [[nodiscard]] int exit_fd() const override { return sandbox_.exit_fd(); }
  // With a retire hook, an init that has reported is left for the hook's owner to end.
  void kill() override {
    if (!retire_ || !sandbox_.reported()) sandbox_.kill();
  }
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
  Retire retire_;
};

// A session call's limit facts from the session's groups (`limits`, may be null), whose
// stats were `before` at the call's start: this call's OOM kill and process ceiling, its
// CPU time (the growth) and the session's memory peak. `sigkilled_unasked`: the call's
// main process died of SIGKILL the host did not send. Returns the stats read now (empty
// without groups): the next call's `before`, as nothing of the session runs between calls.
proc::LimitGroupStats session_call_limits(const proc::LimitGroup* limits,
                                          const proc::LimitGroupStats& before,
                                          bool sigkilled_unasked, Termination& t,
                                          RunResult& result);

}  // namespace cordon::ns
