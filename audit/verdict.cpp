#include "audit/verdict.h"

#include <array>
#include <sstream>

#include "cordon/units.h"

namespace cordon::audit {
namespace {

constexpr std::array<std::string_view, 4> kStatusNames = {"BLOCKED", "ESCAPED", "ERROR", "SKIPPED"};

Finding blocked(std::string why) { return {AttemptStatus::kBlocked, std::move(why)}; }
Finding escaped(std::string why) { return {AttemptStatus::kEscaped, std::move(why)}; }
Finding error(std::string why) { return {AttemptStatus::kError, std::move(why)}; }

std::string first_line(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  return line.size() > 120 ? line.substr(0, 117) + "..." : line;
}

// The first line of `out` that starts with `word`, without the word.
std::optional<std::string> line_starting(const std::string& out, std::string_view word) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(word)) return first_line(line.substr(word.size() + 1));
  }
  return std::nullopt;
}

// Whether the probe demonstrably ran: its `require` text, else any output at all.
bool probe_ran(const Attempt& attempt, const RunResult& run) {
  if (!attempt.require.empty()) return run.stdout_data.find(attempt.require) != std::string::npos;
  return !run.stdout_data.empty();
}

std::string did_not_run(const RunResult& run) {
  std::string why = "the probe did not run (" + std::string(to_string(run.outcome));
  if (!run.stderr_data.empty()) why += ": " + first_line(run.stderr_data);
  return why + ")";
}

Finding judge_printed(const RunResult& run) {
  if (auto e = line_starting(run.stdout_data, "ESCAPED")) return escaped(*e);
  if (auto b = line_starting(run.stdout_data, "BLOCKED")) return blocked(*b);
  return error(did_not_run(run));
}

// A host-side judge: `escape` is what the host saw; blocked only if the probe ran.
Finding judge_host(const Attempt& attempt, const RunResult& run, bool escape,
                   std::string escape_words, std::string blocked_words) {
  if (escape) return escaped(std::move(escape_words));
  if (!probe_ran(attempt, run)) return error(did_not_run(run));
  return blocked(std::move(blocked_words));
}

Finding judge_canary(const Attempt& attempt, const Evidence& ev, const std::string& output) {
  for (const auto& [name, value] : ev.secrets) {
    if (!value.empty() && output.find(value) != std::string::npos) {
      return escaped("the output holds the " + name + " canary");
    }
  }
  return judge_host(attempt, *ev.run, false, "", "no canary in the output");
}

// The victim's own report and the host's look at its workspace first: a probe that only
// disturbed the other session (killed its process, reached its socket, changed its file)
// prints no secret.
Finding judge_cross_session(const Attempt& attempt, const Evidence& ev) {
  if (ev.peer_output.find("cordon-audit-peer-ok") == std::string::npos) {
    return error("the other session's call did not run: " + first_line(ev.peer_output));
  }
  if (auto t = line_starting(ev.peer_output, "cordon-audit-peer-touched:")) {
    return escaped("the other session says " + *t);
  }
  if (ev.peer_ended) return escaped("the other session's call ended while the probe ran");
  if (!ev.peer_file_intact) return escaped("the other session's workspace file was changed");
  if (ev.listener_reached) {
    return escaped("the loopback listener only the other session's allow-list names was reached");
  }
  const RunResult& run = *ev.run;
  Finding canary = judge_canary(attempt, ev, run.stdout_data + run.stderr_data);
  if (canary.status == AttemptStatus::kEscaped) return canary;
  if (auto e = line_starting(run.stdout_data, "ESCAPED")) return escaped(*e);
  if (!probe_ran(attempt, run)) return error(did_not_run(run));
  if (auto b = line_starting(run.stdout_data, "BLOCKED")) return blocked(*b);
  return blocked("nothing of the other session was reached");
}

Finding judge_deadline(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  const auto limit = attempt.timeout.count();
  if (run.outcome == Outcome::kSandboxError) return error(did_not_run(run));
  if (run.outcome != Outcome::kTimedOut) {
    return escaped("not stopped by the deadline: " + std::string(to_string(run.outcome)));
  }
  // Wide bound: a loaded machine is slow, but a run never stopped is not "slow".
  if (run.wall_ms > limit + 3000) {
    return escaped("stopped only after " + std::to_string(run.wall_ms) + " ms");
  }
  if (ev.survivors > 0) return escaped(std::to_string(ev.survivors) + " processes outlived it");
  return blocked("timed out at " + std::to_string(run.wall_ms) + " ms");
}

Finding judge_memory(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  const std::uint64_t limit = attempt.limits.memory_bytes.value_or(0);
  if (auto e = line_starting(run.stdout_data, "ESCAPED")) return escaped(*e);
  // Unmeasured (the sandbox's init killed with the code) proves nothing either way.
  const auto rss = static_cast<std::uint64_t>(run.max_rss_kb.value_or(0)) * 1024;
  if (limit > 0 && rss > limit + limit / 2) {
    return escaped("a process reached " + format_size(rss) + " resident");
  }
  switch (run.outcome) {
    case Outcome::kLimitExceeded:
    case Outcome::kSignaled:
      return blocked("stopped: " + std::string(to_string(run.outcome)) +
                     (run.oom_killed ? " (oom_killed)" : ""));
    case Outcome::kFailed:
      if (run.stderr_data.find("MemoryError") != std::string::npos) {
        return blocked("allocation refused (MemoryError)");
      }
      break;
    default:
      break;
  }
  return error(did_not_run(run));
}

Finding judge_peak(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  const std::uint64_t limit = attempt.limits.max_processes.value_or(0);
  if (auto e = line_starting(run.stdout_data, "ESCAPED")) return escaped(*e);
  // +1: the host may see the parent's last fork half-done while the count is taken.
  if (limit > 0 && ev.process_peak > limit + 1) {
    return escaped("the host saw " + std::to_string(ev.process_peak) + " of its processes");
  }
  if (ev.survivors > 0) return escaped(std::to_string(ev.survivors) + " processes outlived it");
  if (auto b = line_starting(run.stdout_data, "BLOCKED")) {
    return blocked(*b + "; host peak " + std::to_string(ev.process_peak));
  }
  // The ceiling held by ending the whole run (gVisor's sentry cannot go on without the
  // threads it was refused): the code never got past it, which is what is claimed.
  if (run.outcome == Outcome::kLimitExceeded && run.limit == LimitKind::kProcesses) {
    return blocked("the run ended at its process limit; host peak " +
                   std::to_string(ev.process_peak));
  }
  return error(did_not_run(run));
}

Finding judge_disk(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  const std::uint64_t scratch = attempt.limits.scratch_bytes.value_or(0);
  if (auto e = line_starting(run.stdout_data, "ESCAPED")) return escaped(*e);
  if (scratch > 0 && ev.host_file_bytes > scratch) {
    return escaped("the host holds a " + format_size(ev.host_file_bytes) + " file of it");
  }
  // Three times the scratch size: other work on the machine moves free space too.
  if (scratch > 0 && ev.host_disk_drop > 3 * scratch) {
    return escaped("the host lost " + format_size(ev.host_disk_drop) + " of free space");
  }
  if (auto b = line_starting(run.stdout_data, "BLOCKED")) return blocked(*b);
  return error(did_not_run(run));
}

Finding judge_output(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  const std::uint64_t cap = effective_output_cap(attempt.limits);
  if (run.stdout_data.size() > cap) {
    return escaped("kept " + format_size(run.stdout_data.size()) + " past a " + format_size(cap) +
                   " cap");
  }
  // The truncation flag is the control: the flood happened and was cut.
  if (!run.stdout_truncated) return error("no truncation: the flood did not happen");
  // The code still floods at the deadline, its pipes full: the run is a timeout all the
  // same, back promptly (wide bound, as for the deadline judge). A runtime relaying the
  // stdio once blocked on the full pipe until the teardown bound: a sandbox error (an
  // ERROR here) ~10 s later.
  const std::string kept = "kept " + format_size(run.stdout_data.size()) + ", marked truncated";
  if (run.outcome != Outcome::kTimedOut) {
    return escaped(kept + ", but flooding at the deadline it ended " +
                   std::string(to_string(run.outcome)));
  }
  // Wide bound over what a waiting run killed at the same deadline costs past it here (its
  // set-up, kill and teardown): an emulated guest takes seconds for those, a relay stuck on
  // the pipe ~10 s more.
  if (ev.run_ms > attempt.timeout.count() + ev.baseline_ms + 3000) {
    return escaped(kept + ", but it came back only " + std::to_string(ev.run_ms) +
                   " ms after the start (a waiting run killed at the same deadline is back " +
                   std::to_string(ev.baseline_ms) + " ms after it)");
  }
  return blocked(kept + "; timed out, back after " + std::to_string(ev.run_ms) + " ms");
}

}  // namespace

std::string_view to_string(AttemptStatus status) {
  return kStatusNames.at(static_cast<int>(status));
}

std::optional<AttemptStatus> parse_status(std::string_view text) {
  for (std::size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == text) return static_cast<AttemptStatus>(i);
  }
  return std::nullopt;
}

Finding judge(const Attempt& attempt, const Evidence& ev) {
  const RunResult& run = *ev.run;
  if (run.outcome == Outcome::kSandboxError) {
    return error("sandbox error: " + first_line(run.error.value_or("")));
  }
  switch (attempt.judge) {
    case Judge::kPrinted:
      return judge_printed(run);
    case Judge::kTcpListener:
    case Judge::kUdpListener:
    case Judge::kAbstractUnix:
    case Judge::kPathUnix:
      return judge_host(attempt, run, ev.listener_reached, "the host listener was reached",
                        "the host listener got nothing");
    case Judge::kCanary:
      return judge_canary(attempt, ev, run.stdout_data + run.stderr_data);
    case Judge::kCrossRun:
      if (ev.peer_output.find("cordon-audit-peer-ok") == std::string::npos) {
        return error("the writing run did not run: " + first_line(ev.peer_output));
      }
      return judge_canary(attempt, ev, run.stdout_data + run.stderr_data);
    case Judge::kCrossSession:
      return judge_cross_session(attempt, ev);
    case Judge::kHostFileCreated:
      return judge_host(attempt, run, ev.file_created, "the file appeared on the host",
                        "nothing appeared on the host");
    case Judge::kHostFileIntact:
      return judge_host(attempt, run, !ev.file_intact, "the host file is gone or changed",
                        "the host file is intact");
    case Judge::kTunable:
      return judge_host(attempt, run, ev.tunable_after != ev.tunable_before,
                        "the host's value went " + ev.tunable_before + " -> " + ev.tunable_after,
                        "the host's value is unchanged");
    case Judge::kSurvivors:
      return judge_host(attempt, run, ev.survivors > 0,
                        std::to_string(ev.survivors) + " of its processes outlived the run",
                        "nothing of it outlived the run");
    case Judge::kVictim:
      return judge_host(attempt, run, !ev.victim_alive, "the host process was killed",
                        "the host process is alive");
    case Judge::kDeadline:
      return judge_deadline(attempt, ev);
    case Judge::kMemory:
      return judge_memory(attempt, ev);
    case Judge::kProcessPeak:
      return judge_peak(attempt, ev);
    case Judge::kDisk:
      return judge_disk(attempt, ev);
    case Judge::kOutput:
      return judge_output(attempt, ev);
  }
  return error("unknown judge");
}

}  // namespace cordon::audit
