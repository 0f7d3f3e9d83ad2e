// The outcome of one run, as every backend reports it.
//
// The outcomes stay distinct: success; the code failed (exit code) or was killed by a
// signal; it never finished (timed out, decided from the deadline only); it hit a
// limit; it was cancelled; the sandbox itself failed. This is not cordon::Error: an
// API error means the request could not be handled, an outcome describes the run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/request.h"

namespace cordon {

// 2: cpu_ms and max_rss_kb are null when not measured (1 wrote 0); a run cordon stopped
// reports the SIGKILL it was stopped with in `signal` (1 wrote 0 where the backend did not
// see the end itself).
// 3: `network`, null unless the run had a network allow-list.
// 4: `limit` may be "network": the run failed after its network allow-list's byte or
// connection limit was reached (apply_network_limit()).
// 5: `environment`, {name, digest} of the environment the code ran in, where its front end
// named one (frontend/environment.h), else null.
// 6: `value`, `state_lost` and `session`: a call in a session (session.h).
inline constexpr int kResultSchemaVersion = 6;

enum class Outcome {
  kOk,             // exit 0 before the deadline
  kFailed,         // exited with a non-zero status
  kSignaled,       // killed by a signal not sent by cordon
  kTimedOut,       // still running at the deadline; killed by cordon
  kLimitExceeded,  // stopped by a resource ceiling (see RunResult::limit)
  kCancelled,      // cancelled by the caller before the deadline
  kSandboxError,   // the sandbox itself failed; see RunResult::error
};

enum class LimitKind { kMemory, kProcesses, kOutput, kDisk, kCpu, kNetwork };

// Every value, in declaration order: what readers of the names ("limit_exceeded",
// "memory") look them up in.
inline constexpr Outcome kAllOutcomes[] = {
    Outcome::kOk,          Outcome::kFailed,        Outcome::kSignaled,
    Outcome::kTimedOut,    Outcome::kLimitExceeded, Outcome::kCancelled,
    Outcome::kSandboxError};
inline constexpr LimitKind kAllLimitKinds[] = {LimitKind::kMemory, LimitKind::kProcesses,
                                               LimitKind::kOutput, LimitKind::kDisk,
                                               LimitKind::kCpu,    LimitKind::kNetwork};

std::string_view to_string(Outcome outcome);
std::string_view to_string(LimitKind limit);

struct Artifact {
  std::string path;  // relative to the working directory
  std::uint64_t size = 0;
  std::string sha256;   // lower-case hex
  std::string content;  // raw bytes
};

// One enforced measure of this run: what was actually applied, e.g.
// {memory, "RLIMIT_AS", "256 MiB"} when a cgroup could not be had.
struct Enforced {
  Aspect aspect = Aspect::kTimeout;
  std::string mechanism;
  std::optional<std::string> value;
};

// One connection the code asked the egress proxy for (issue #16), allowed or denied.
struct NetConnection {
  std::string method;  // CONNECT, GET, ...; empty when the request could not be read
  std::string host;    // as the code named it (lower case); empty when unreadable
  std::uint16_t port = 0;
  std::string address;  // the address connected to, when one was
  bool allowed = false;
  std::string why;
  std::uint64_t bytes_out = 0;  // from the sandbox
  std::uint64_t bytes_in = 0;   // to the sandbox
};

// A run with a network allow-list: the list and limits it ran with and what went through.
struct NetworkReport {
  NetworkAccess access;
  std::vector<NetConnection> connections;
  std::uint64_t dropped = 0;                 // connections past the ones kept
  std::optional<std::string> limit_reached;  // "bytes" or "connections"
};

struct BackendId {
  std::string name;
  std::string version;
  std::string
      variant{};  // NOLINT(readability-redundant-member-init): Backend::variant(), "" for none
};

struct PolicyId {
  std::string name;
  std::string hash;
};

// A call's place in its session: the session's id and the call's index in it (from 1).
struct SessionCallRef {
  std::string id;
  std::int64_t call = 0;
  bool operator==(const SessionCallRef&) const = default;
};

struct RunResult {
  Outcome outcome = Outcome::kSandboxError;
  std::optional<LimitKind> limit;  // set iff outcome == kLimitExceeded

  // Raw bytes as the code wrote them (capped per stream). JSON shows them decoded as
  // UTF-8 with U+FFFD replacements; the raw bytes stay here for the API and history.
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;

  // How the main process ended. exit_code: its exit status, -1 when it did not exit
  // (killed, or never started). signal: the signal that killed it, 0 when it exited or
  // never started. A run cordon stopped (timed out, cancelled) was killed with SIGKILL (9)
  // by cordon, so that is its signal, unless it had exited by itself first.
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool oom_killed = false;

  // Figures. Each has one source, and is std::nullopt when this run did not measure it:
  // never 0 for "unknown".
  std::int64_t wall_ms = 0;   // cordon's clock: the code's start to its end (or its kill)
  std::int64_t setup_ms = 0;  // cordon's clock: sandbox set-up and teardown
  // User + system CPU time of the run's processes: the sandbox's cgroup (cpuacct.usage,
  // cpu.stat usage_usec; orphans included) where the backend has one, else the rusage of
  // what was reaped (wait4, RUSAGE_CHILDREN). Unmeasured when neither was read, e.g. a
  // sandbox without a CPU group whose init was killed at the deadline.
  std::optional<std::int64_t> cpu_ms;
  // ru_maxrss of the main process as its reaper saw it: the largest peak resident set
  // among it and the descendants it waited for. Resident pages include shared file pages
  // (the interpreter, its libraries) that the host's page cache holds, so it can exceed
  // memory_peak_kb. Unmeasured when the main process's reaper was killed with it (the
  // sandbox's init, at the deadline or on cancel), and when it cannot be told apart from
  // the peak of the process that cloned the code: execve keeps the larger of the old and
  // the new memory's peaks, so a code spawned straight from a large process (the
  // inspector) would otherwise report that process's size.
  std::optional<std::int64_t> max_rss_kb;
  // The peak of memory charged to the sandbox's cgroup (memory.max_usage_in_bytes, v2
  // memory.peak): the memory the limit counts, of every process of the sandbox (under gVisor,
  // `container (runsc)`, its own kernel's too). Shared file pages first read by someone else
  // are charged to them, not here.
  std::optional<std::int64_t> memory_peak_kb;

  BackendId backend;
  std::optional<PolicyId> policy;
  std::vector<Enforced> enforced;
  std::vector<Artifact> artifacts;
  std::optional<std::string> error;  // why the sandbox failed (kSandboxError), else unset
  std::optional<ToolDescriptionRef> tool_description;
  std::optional<NetworkReport> network;       // set iff the request had an allow-list
  std::optional<EnvironmentRef> environment;  // the request's, when its front end named one

  // A call in a session (session.h). value: the repr of a python call's trailing
  // expression (capped at kMaxSessionValueBytes), unset when it had none. state_lost: the
  // call ended the session's interpreter (timeout, cancel, memory limit, or it died):
  // variables are gone, files are kept. session: which session and which of its calls
  // (from 1), set by the front end that holds the session.
  std::optional<std::string> value;
  bool state_lost = false;
  std::optional<SessionCallRef> session;

  // The seed's field: exit 0 and not timed out.
  [[nodiscard]] bool ok() const { return outcome == Outcome::kOk; }
};

// A result that says the sandbox failed before or around the code, with the reason.
[[nodiscard]] RunResult sandbox_error(BackendId backend, std::string why);

// The outcome from the facts of a finished run, in the one order every backend uses:
// the deadline first (never inferred from error text), then cancellation, then limits,
// then how the process ended. One rule for the process limit, whatever enforces it: a
// run that failed (non-zero exit or a signal) after a fork or clone was refused at the
// ceiling exceeded the process limit; one that exited 0 succeeded (code may probe the
// limit and cope).
struct Termination {
  bool deadline_passed = false;  // the code was still running at the deadline
  bool cancelled = false;        // cancel arrived before the deadline
  bool oom_killed = false;
  std::optional<LimitKind> limit;  // another limit known to have stopped the run
  bool exited = false;             // WIFEXITED
  int exit_code = -1;
  int signal = 0;
  bool process_ceiling_hit = false;  // a fork/clone was refused at the process limit
};
void apply_termination(const Termination& t, RunResult& result);

// The network allow-list's limits by the process limit's rule, once the run's network
// report is in (result.network): a run that failed (non-zero exit or a signal) after its
// byte or connection limit was reached exceeded that limit (kLimitExceeded, kNetwork); one
// that exited 0 coped and succeeded; a deadline, a cancel or another limit stays what
// decided the run. The report's `limit_reached` says which ("bytes", "connections").
void apply_network_limit(RunResult& result);

}  // namespace cordon
