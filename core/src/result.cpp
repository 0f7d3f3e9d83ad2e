#include "cordon/result.h"

#include "cordon/observer.h"

namespace cordon {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSignaled:
      return "signaled";
    case Outcome::kTimedOut:
      return "timed_out";
    case Outcome::kLimitExceeded:
      return "limit_exceeded";
    case Outcome::kCancelled:
      return "cancelled";
    case Outcome::kSandboxError:
      return "sandbox_error";
  }
  return "unknown";
}

std::string_view to_string(LimitKind limit) {
  switch (limit) {
    case LimitKind::kMemory:
      return "memory";
    case LimitKind::kProcesses:
      return "processes";
    case LimitKind::kOutput:
      return "output";
    case LimitKind::kDisk:
      return "disk";
    case LimitKind::kCpu:
      return "cpu";
    case LimitKind::kNetwork:
      return "network";
  }
  return "unknown";
}

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::kPreparing:
      return "preparing";
    case RunState::kRunning:
      return "running";
    case RunState::kStopping:
      return "stopping";
    case RunState::kFinished:
      return "finished";
  }
  return "unknown";
}

RunResult sandbox_error(BackendId backend, std::string why) {
  RunResult result;
  result.outcome = Outcome::kSandboxError;
  result.backend = std::move(backend);
  result.error = std::move(why);
  return result;
}

namespace {

Outcome decide(const Termination& t) {
  // The deadline comes first and is a fact the backend measured, never read from an
  // error message: a run killed at its deadline timed out, whatever else happened.
  if (t.deadline_passed) return Outcome::kTimedOut;
  if (t.cancelled) return Outcome::kCancelled;
  if (t.oom_killed || t.limit) return Outcome::kLimitExceeded;
  const bool succeeded = t.exited && t.exit_code == 0;
  if (t.process_ceiling_hit && !succeeded) return Outcome::kLimitExceeded;
  if (t.exited) return t.exit_code == 0 ? Outcome::kOk : Outcome::kFailed;
  return Outcome::kSignaled;
}

}  // namespace

void apply_termination(const Termination& t, RunResult& result) {
  result.outcome = decide(t);
  result.timed_out = result.outcome == Outcome::kTimedOut;
  // The facts of how the process ended are kept whatever the outcome, so a caller can
  // tell "timed out, then killed by SIGKILL" from "timed out while exiting 0".
  result.exit_code = t.exited ? t.exit_code : -1;
  result.signal = t.exited ? 0 : t.signal;
  result.oom_killed = t.oom_killed;
  result.limit.reset();
  if (result.outcome == Outcome::kLimitExceeded) {
    result.limit = t.oom_killed ? LimitKind::kMemory : t.limit.value_or(LimitKind::kProcesses);
  }
}

void apply_network_limit(RunResult& result) {
  if (!result.network || !result.network->limit_reached) return;
  if (result.outcome != Outcome::kFailed && result.outcome != Outcome::kSignaled) return;
  result.outcome = Outcome::kLimitExceeded;
  result.limit = LimitKind::kNetwork;
}

}  // namespace cordon
