#include "cordon/run_driver.h"

#include <algorithm>
#include <csignal>
#include <string_view>
#include <utility>

#include "cordon/claims.h"
#include "cordon/proc/output_pump.h"
#include "cordon/proc/spawn.h"
#include "cordon/units.h"
#include "cordon/workspace.h"

namespace cordon {
namespace {

using std::chrono::milliseconds;

// After the tree is dead its pipes reach EOF at once; this only bounds the case where
// something outside the tree got hold of a write end.
constexpr milliseconds kDrainBound{1000};

void fail_run(RunResult& result, std::string why) {
  result.outcome = Outcome::kSandboxError;
  result.error = std::move(why);
}

// pump.run() until the end, waking every kSampleInterval to hand the observer a sample
// while the tree can give one. Each slice is a full pump.run(), so an exit seen in the
// same wake-up as the real deadline still counts as an exit.
Result<proc::PumpStop> pump_sampling(proc::OutputPump& pump, const StartedTree& tree,
                                     const CancelToken& cancel, RunClock::time_point start,
                                     RunClock::time_point deadline, RunObserver* observer) {
  if (observer == nullptr) return pump.run(tree.exit_fd(), cancel.wait_fd(), deadline);
  for (;;) {
    const RunClock::time_point slice = std::min(deadline, RunClock::now() + kSampleInterval);
    auto stop = pump.run(tree.exit_fd(), cancel.wait_fd(), slice);
    if (!stop || stop->reason != proc::StopReason::kDeadline || slice >= deadline) return stop;
    std::optional<ResourceSample> sample = tree.sample();
    if (!sample) return pump.run(tree.exit_fd(), cancel.wait_fd(), deadline);
    sample->elapsed = std::chrono::duration_cast<milliseconds>(RunClock::now() - start);
    observer->on_sample(*sample);
  }
}

}  // namespace

void RunStateReporter::set(RunState state) {
  if (observer_ != nullptr && !finished_) observer_->on_state(state);
  if (state == RunState::kFinished) finished_ = true;
}

Result<RunPipes> make_run_pipes(const RunRequest& request) {
  auto out = proc::make_pipe();
  if (!out) return std::unexpected(out.error());
  auto err = proc::make_pipe();
  if (!err) return std::unexpected(err.error());
  RunPipes pipes{std::move(*out), std::move(*err), std::nullopt};
  if (request.stdin_data) {
    auto in = proc::make_pipe();
    if (!in) return std::unexpected(in.error());
    pipes.in = std::move(*in);
  }
  return pipes;
}

RunResult cancelled_before_start(BackendId backend, RunClock::time_point setup_started) {
  RunResult r;
  r.backend = std::move(backend);
  Termination t;
  t.cancelled = true;
  apply_termination(t, r);
  r.setup_ms = ms_between(setup_started, RunClock::now());
  return r;
}

RunSetup::RunSetup(Backend& backend, const RunRequest& request, RunObserver* observer,
                   const Probe* probe)
    : id{std::string(backend.name()), std::string(backend.version()), backend.variant()},
      started(RunClock::now()),
      until(started + request.setup_bound),
      state(observer) {
  state.set(RunState::kPreparing);
  if (auto st = check_request(backend, request); !st) {
    refused = error("invalid request: " + st.error().describe());
  } else if (probe != nullptr && !probe->available) {
    refused = error(probe->reason);
  } else {
    const RunClock::time_point before = RunClock::now();
    if (Status prepared = backend.prepare(); !prepared) {
      refused = error(prepared.error().describe());
    }
    // The backend's one-time preparation (the first run's, when nobody prepared it up
    // front) is not this run's set-up: the bound does not count it. setup_ms does, since
    // the caller waited for it.
    until += RunClock::now() - before;
  }
}

RunResult RunSetup::error(std::string why) const { return sandbox_error(id, std::move(why)); }

RunResult RunSetup::cancelled() const { return cancelled_before_start(id, started); }

RunFrame RunSetup::frame() const {
  RunFrame frame;
  frame.backend = id;
  frame.setup_started = started;
  return frame;
}

RunResult drive_run(const RunRequest& request, const CancelToken& cancel, RunStateReporter& state,
                    StartedTree& tree, RunPipes pipes, RunFrame frame) {
  const milliseconds timeout = effective_timeout(request);
  const std::uint64_t cap_bytes = effective_output_cap(request.limits);
  const RunClock::time_point t_start = RunClock::now();
  const RunClock::time_point deadline = t_start + timeout;
  // Our copies of the child's ends must close, or the pipes never reach EOF.
  pipes.out.write.reset();
  pipes.err.write.reset();
  if (pipes.in) pipes.in->read.reset();
  state.set(RunState::kRunning);

  // Pump output until the main process ends, the deadline passes, or cancel.
  proc::OutputPump pump(std::move(pipes.out.read), std::move(pipes.err.read),
                        pipes.in ? std::move(pipes.in->write) : UniqueFd(),
                        request.stdin_data ? std::string_view(*request.stdin_data) : "", cap_bytes,
                        state.observer());
  auto stop = pump_sampling(pump, tree, cancel, t_start, deadline, state.observer());
  const RunClock::time_point t_end = stop ? stop->at : RunClock::now();
  state.set(RunState::kStopping);

  // Nothing outlives the run: kill the tree whatever ended the pump, then reap and
  // measure, then read what the pipes still hold.
  const RunClock::time_point teardown_until = t_end + request.setup_bound;
  tree.kill();
  // After a deadline or a cancel, a tree that ends only once its output was read is
  // pumped on until it says it ended; one that exited has said so already.
  if (tree.ends_once_output_is_read() && stop && stop->reason != proc::StopReason::kExited) {
    (void)pump.run(tree.exit_fd(), /*cancel_fd=*/-1, teardown_until);
  }
  auto finished = tree.finish(teardown_until);
  (void)pump.drain(std::min(teardown_until, RunClock::now() + kDrainBound));

  RunResult result;
  const RunClock::time_point setup_started = frame.setup_started;
  take_frame(std::move(frame), request, result);
  result.stdout_data = std::move(pump.out().data);
  result.stderr_data = std::move(pump.err().data);
  result.stdout_truncated = pump.out().truncated;
  result.stderr_truncated = pump.err().truncated;
  result.wall_ms = ms_between(t_start, t_end);
  auto setup_ms = [&] {
    return ms_between(setup_started, t_start) + ms_between(t_end, RunClock::now());
  };

  if (!stop || !finished) {
    fail_run(result, !stop ? "output pump: " + stop.error().describe()
                           : "teardown: " + finished.error().describe());
    result.setup_ms = setup_ms();
    return result;
  }

  // The outcome, in apply_termination's order: deadline, cancel, limits, exit.
  Termination t;
  t.deadline_passed = stop->reason == proc::StopReason::kDeadline;
  t.cancelled = stop->reason == proc::StopReason::kCancelled;
  const Status end = tree.describe_end(t, result);
  // A tree still running at the deadline or at cancel ends by kill(), and every backend
  // kills with SIGKILL. A backend that saw no end of its own (its sandbox's init, which
  // would have reaped the main process, died with it) has no signal to give: the one
  // cordon sent is how the code ended.
  if ((t.deadline_passed || t.cancelled) && !t.exited && t.signal == 0) t.signal = SIGKILL;
  // RLIMIT_CPU sends SIGXCPU at the soft limit: with a CPU limit asked for, that signal
  // is the limit, not the code's own failure.
  if (request.limits.cpu_time && t.signal == SIGXCPU) t.limit = LimitKind::kCpu;
  apply_termination(t, result);
  if (!end) fail_run(result, end.error().describe());

  // Artifacts, now that every writer is dead.
  if (!request.artifact_globs.empty()) {
    auto dir = tree.artifact_dir();
    auto collected =
        dir ? collect_artifacts(*dir, request.artifact_globs, request.artifact_max_bytes)
            : Result<CollectedArtifacts>(std::unexpected(dir.error()));
    if (!collected) {
      fail_run(result, "collect artifacts: " + collected.error().describe());
    } else {
      result.artifacts = std::move(collected->artifacts);
    }
  }

  // What the run made on the host; its failure is the sandbox's, not the code's.
  if (auto st = tree.teardown(teardown_until); !st && result.outcome != Outcome::kSandboxError) {
    fail_run(result, st.error().describe());
  }
  result.setup_ms = setup_ms();
  return result;
}

void take_frame(RunFrame frame, const RunRequest& request, RunResult& result) {
  result.backend = std::move(frame.backend);
  result.policy = std::move(frame.policy);
  result.tool_description = request.tool_description;
  result.environment = request.environment;
  result.enforced.push_back({Aspect::kTimeout, std::move(frame.timeout_mechanism),
                             format_duration(effective_timeout(request))});
  const Capability output = output_claim(effective_output_cap(request.limits));
  result.enforced.push_back({Aspect::kOutput, output.mechanism, output.value});
  for (auto& e : frame.enforced) result.enforced.push_back(std::move(e));
}

void take_init_report(int wait_status, std::int64_t maxrss_kb, std::int64_t children_cpu_us,
                      Termination& t, RunResult& result) {
  proc::ExitInfo main;
  main.status = wait_status;
  t.exited = main.exited();
  t.exit_code = main.exit_code();
  t.signal = main.signal();
  result.max_rss_kb = maxrss_kb;
  result.cpu_ms = children_cpu_us / 1000;
}

std::int64_t ms_between(RunClock::time_point a, RunClock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace cordon
