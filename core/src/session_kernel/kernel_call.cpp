#include "cordon/kernel_call.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <csignal>
#include <string>
#include <utility>

#include "cordon/proc/output_pump.h"
#include "cordon/session.h"

namespace cordon {
namespace {

// Once the kernel is dead its pipes reach EOF at once; this only bounds a writer cordon
// could not kill (run_driver.cpp's drain bound).
constexpr std::chrono::milliseconds kDrainBound{1000};
// How long a kernel that closed its channel has to exit on its own.
constexpr std::chrono::seconds kExitGrace{2};
// How long end() may take to kill and reap the kernel's processes.
constexpr std::chrono::seconds kEndBound{10};

// The pump owns what it reads: a duplicate, so the kernel's pipes outlive the call.
UniqueFd duplicate(int fd) { return UniqueFd(fd >= 0 ? ::fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1); }

// How the kernel ended, from its wait status; unknown: cordon's SIGKILL ended it.
void take_status(std::optional<int> status, Termination& t) {
  if (status && WIFEXITED(*status)) {
    t.exited = true;
    t.exit_code = WEXITSTATUS(*status);
  } else {
    t.signal = status && WIFSIGNALED(*status) ? WTERMSIG(*status) : SIGKILL;
  }
}

}  // namespace

RunResult run_kernel_call(StartedKernel& kernel, const KernelCall& call, const RunRequest& request,
                          const CancelToken& cancel, RunObserver* observer,
                          const KernelCallFacts& facts) {
  RunResult result;
  proc::OutputPump pump(duplicate(kernel.stdout_fd), duplicate(kernel.stderr_fd), UniqueFd(), "",
                        effective_output_cap(request.limits), observer);
  const RunClock::time_point t_start = RunClock::now();
  const RunClock::time_point deadline = t_start + effective_timeout(request);
  // The pipes are read while the client waits: the kernel flushes them before replying.
  KernelCallResult answer = kernel.client->call(call, deadline, cancel, &pump);
  const RunClock::time_point t_end = RunClock::now();
  const Status& pumped = answer.output;

  bool lost = answer.outcome != KernelOutcome::kReply || !pumped;
  std::string broke;  // why a kernel that did not end on its own was ended
  if (answer.outcome == KernelOutcome::kProtocolError) {
    broke = "the interpreter broke its protocol (" + answer.detail + ")";
  } else if (!lost && kernel.expects_sweep && !answer.reply.swept) {
    lost = true;
    broke = "the interpreter did not end the call's other processes";
  }
  Termination t;
  if (lost) {
    // A kernel that closed its channel is exiting: its own status, unless it lingers.
    const RunClock::time_point kill_at =
        answer.outcome == KernelOutcome::kGone ? t_end + kExitGrace : t_end;
    const std::optional<int> status =
        kernel.end ? kernel.end(kill_at, kill_at + kEndBound) : std::nullopt;
    (void)pump.drain(RunClock::now() + kDrainBound);
    t.deadline_passed = answer.outcome == KernelOutcome::kDeadline;
    t.cancelled = answer.outcome == KernelOutcome::kCancelled;
    if (answer.outcome != KernelOutcome::kReply) take_status(status, t);
  } else {
    (void)pump.drain_ready();
  }
  if (answer.outcome == KernelOutcome::kReply) {
    const KernelReply& reply = answer.reply;
    t.exited = reply.exit_code.has_value();
    t.exit_code = reply.exit_code.value_or(-1);
    t.signal = reply.signal.value_or(0);
    result.value = reply.value;
  }
  result.stdout_data = std::move(pump.out().data);
  result.stderr_data = std::move(pump.err().data);
  result.stdout_truncated = pump.out().truncated;
  result.stderr_truncated = pump.err().truncated;
  // The kernel's own failure (a command it could not start) and cordon's reason for ending
  // a kernel that was alive: nothing else would say why the call failed.
  if (answer.outcome == KernelOutcome::kReply && answer.reply.error) {
    result.stderr_data += "cordon: " + *answer.reply.error + "\n";
  }
  if (!broke.empty()) result.stderr_data += "cordon: " + broke + "\n";
  result.wall_ms = ms_between(t_start, t_end);
  if (facts) facts(t, result);
  // The memory limit ends every process of the call, the kernel too, even when what the
  // OOM killer chose was a child the kernel outlived.
  if (t.oom_killed && !lost) {
    lost = true;
    if (kernel.end) (void)kernel.end(RunClock::now(), RunClock::now() + kEndBound);
  }
  apply_termination(t, result);
  result.state_lost = lost;
  if (!pumped) {
    result.outcome = Outcome::kSandboxError;
    result.error = "output pump: " + pumped.error().describe();
  }
  return result;
}

}  // namespace cordon
