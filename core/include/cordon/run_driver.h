// The second half of every backend's run(), written once: from "the code has started"
// to the finished RunResult (docs/ARCHITECTURE.md, "Run lifecycle").
//
// A backend plans, prepares and starts its contained tree its own way (a cgroup or the
// subreaper helper, namespaces, an OCI runtime), then hands it to drive_run(), which
// closes the child's pipe ends, pumps output until exit, deadline or cancel, kills
// the tree whatever ended the pump, reaps and drains, decides the outcome with
// apply_termination(), collects artifacts and tears down. What differs per backend
// (how the tree is killed and reaped, what it can tell about how the code ended,
// where artifacts are, what to remove) is the StartedTree interface below. Keeping the
// order of these steps in one place is the point: the kill always happens, artifacts
// are read only once every writer is dead, a deadline always wins over an exit status.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/cancel.h"
#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/proc/pipe.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon {

using RunClock = std::chrono::steady_clock;

// Whole milliseconds from `a` to `b` (negative when b is earlier).
[[nodiscard]] std::int64_t ms_between(RunClock::time_point a, RunClock::time_point b);
// How often drive_run() asks StartedTree::sample() while the code runs.
inline constexpr std::chrono::milliseconds kSampleInterval{150};

// A started, contained process tree, as the driver sees it. The driver calls, in this
// order: exit_fd() while pumping; kill(); finish(); then, only if finish() succeeded,
// describe_end(), artifact_dir() (only when artifacts were asked for) and teardown().
// Kernel objects stay owned by the implementation (RAII): on a path the driver cuts
// short, their destructors clean up.
class StartedTree {
 public:
  StartedTree() = default;
  StartedTree(const StartedTree&) = delete;
  StartedTree& operator=(const StartedTree&) = delete;
  virtual ~StartedTree() = default;

  // Readable once the main process has ended (its pidfd, a PID namespace init's pidfd,
  // the helper's or the runtime's exit fd). The pump polls it; it is never read.
  [[nodiscard]] virtual int exit_fd() const = 0;

  // Kills every process of the tree now, with SIGKILL (the driver reports that signal for
  // a run stopped at the deadline or on cancel whose end the backend did not see). Called
  // exactly once, whatever ended the pump: also after a normal exit of the main process,
  // since nothing may outlive the run.
  virtual void kill() = 0;

  // Whether the tree, once killed, ends only after its output was read: the driver then
  // pumps on after kill() until exit_fd() is readable. An engine's foreground `podman run`
  // relays the container's output and returns only once it wrote it all (issue #40); the
  // others end on the kill whatever their pipes hold, and a pooled namespace sandbox's
  // exit fd, its report once read, is not readable again (its init is left to the pool).
  [[nodiscard]] virtual bool ends_once_output_is_read() const { return false; }

  // After kill(): reaps, waits until no process of the tree is left and measures it,
  // giving up at `until` (the teardown bound). An error makes the run a sandbox error
  // ("teardown: <error>") with no outcome decided: the code's end is then unknown.
  [[nodiscard]] virtual Status finish(RunClock::time_point until) = 0;

  // After finish() and the drain: how the code ended. The driver has set
  // t.deadline_passed and t.cancelled; this adds exit status or signal, OOM and limit
  // facts to `t`, and the tree's measures (cpu_ms, max_rss_kb, memory_peak_kb) to
  // `result`, leaving unset each one it did not measure. The driver then applies the
  // RLIMIT_CPU rule (SIGXCPU with a CPU limit is a CPU limit hit) and apply_termination().
  // An error means the backend cannot say how the code ended: the run becomes a sandbox
  // error with the error as its reason.
  [[nodiscard]] virtual Status describe_end(Termination& t, RunResult& result) = 0;

  // Where the run's artifacts are to be collected, once every writer is dead. The path
  // must stay valid until teardown() (it may be /proc/self/fd/N of an fd this owns).
  [[nodiscard]] virtual Result<std::filesystem::path> artifact_dir() = 0;

  // Removes what the run made on the host (temp dir, limit groups), bounded by `until`.
  // An error (its describe() is the reason as given) makes the run a sandbox error
  // unless it already is one: the first failure is the one reported.
  [[nodiscard]] virtual Status teardown(RunClock::time_point until) = 0;

  // While pumping, every kSampleInterval when an observer listens: the tree's memory and
  // CPU use now, read from its limit groups. Default: none (cannot measure); the driver
  // stops asking after the first none. Must be quick and never block. Last in the class,
  // so the slots of the hooks above stay where they were.
  [[nodiscard]] virtual std::optional<ResourceSample> sample() const { return std::nullopt; }
};

// The code's stdin/stdout/stderr pipes. The backend passes the child's ends to its
// spawn; drive_run() closes them (or EOF would never come) and pumps the parent's ends.
struct RunPipes {
  proc::Pipe out;
  proc::Pipe err;
  std::optional<proc::Pipe> in;  // only when the request has stdin data

  [[nodiscard]] int child_stdin() const { return in ? in->read.get() : -1; }  // -1: /dev/null
  [[nodiscard]] int child_stdout() const { return out.write.get(); }
  [[nodiscard]] int child_stderr() const { return err.write.get(); }
};

// Every end CLOEXEC: runs on other threads may spawn at any time (pipe.h says why).
[[nodiscard]] Result<RunPipes> make_run_pipes(const RunRequest& request);

// Observer calls with a null check, and kFinished guaranteed on every return path of
// run(): a backend makes one at the top of run() and sets kPreparing; drive_run() sets
// kRunning and kStopping; the destructor sets kFinished.
class RunStateReporter {
 public:
  explicit RunStateReporter(RunObserver* observer) : observer_(observer) {}
  RunStateReporter(const RunStateReporter&) = delete;
  RunStateReporter& operator=(const RunStateReporter&) = delete;
  ~RunStateReporter() { set(RunState::kFinished); }
  void set(RunState state);
  [[nodiscard]] RunObserver* observer() const { return observer_; }

 private:
  RunObserver* observer_;
  bool finished_ = false;
};

// What the backend knew before the start, for the result.
struct RunFrame {
  BackendId backend;
  RunClock::time_point setup_started;  // top of run(): setup_ms counts from here
  std::string timeout_mechanism;       // Enforced{kTimeout} says how the deadline kills
  std::vector<Enforced> enforced;      // the backend's own, after timeout and output
  std::optional<PolicyId> policy;
};

// The first steps of every backend's run(), written once ("Run lifecycle", step 1): the
// set-up clock starts (setup_ms counts from here, the set-up bound ends at `until`), the
// observer hears kPreparing (and kFinished when this goes out of scope, whatever run()
// returns), then check_request(), when the backend passes its probe whether this host can
// run it at all, and then the backend's prepare() (done once: later runs get its remembered
// result; the bound is moved by the time it took, setup_ms still counts it). When one refuses,
// `refused` holds the sandbox error to return at once: "invalid request: <why>", the probe's
// reason, or why it could not prepare.
class RunSetup {
 public:
  RunSetup(Backend& backend, const RunRequest& request, RunObserver* observer,
           const Probe* probe = nullptr);
  RunSetup(const RunSetup&) = delete;
  RunSetup& operator=(const RunSetup&) = delete;

  // A sandbox error of this run, with its reason.
  [[nodiscard]] RunResult error(std::string why) const;
  // The result of this run cancelled before its code started.
  [[nodiscard]] RunResult cancelled() const;
  // The frame for drive_run() with the backend and the set-up start filled in.
  [[nodiscard]] RunFrame frame() const;

  const BackendId id;
  const RunClock::time_point started;
  RunClock::time_point until;  // later by the time a first prepare() took
  RunStateReporter state;
  std::optional<RunResult> refused;
};

// Call right after the tree started: the deadline (effective_timeout) counts from this
// call. Never fails: every failure is a kSandboxError result with its reason.
[[nodiscard]] RunResult drive_run(const RunRequest& request, const CancelToken& cancel,
                                  RunStateReporter& state, StartedTree& tree, RunPipes pipes,
                                  RunFrame frame);

// What the frame and the request say in a result: the backend, policy, tool description,
// environment, and what was enforced (the timeout, the output cap, then the backend's own).
// drive_run() does this; a call that does not go through it (a session kernel's) too.
void take_frame(RunFrame frame, const RunRequest& request, RunResult& result);

// For StartedTree::describe_end of a sandbox whose init reports the main process's end:
// its wait status into `t`, its peak RSS and the CPU time of everything the init reaped
// into `result`.
void take_init_report(int wait_status, std::int64_t maxrss_kb, std::int64_t children_cpu_us,
                      Termination& t, RunResult& result);

// The result of a run cancelled before anything started.
[[nodiscard]] RunResult cancelled_before_start(BackendId backend,
                                               RunClock::time_point setup_started);

}  // namespace cordon
