#include "workload.h"

#include <chrono>

namespace cordon::soak {

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::kOk:
      return "ok";
    case Kind::kOkPython:
      return "ok-python";
    case Kind::kFail:
      return "fail";
    case Kind::kTimeout:
      return "timeout";
    case Kind::kTimeoutPython:
      return "timeout-python";
    case Kind::kCancelEarly:
      return "cancel-early";
    case Kind::kFiles:
      return "files";
    case Kind::kOom:
      return "oom";
    case Kind::kForkBomb:
      return "fork-bomb";
    case Kind::kFlood:
      return "flood";
    case Kind::kCancel:
      return "cancel";
  }
  return "?";
}

RunRequest request_for(Kind kind) {
  RunRequest r;
  r.language = Language::kSh;
  // Generous for the kinds that end by themselves: a loaded machine must not turn them
  // into timeouts.
  r.timeout = std::chrono::seconds(20);
  switch (kind) {
    case Kind::kOk:
      r.code = "echo ok";
      break;
    case Kind::kOkPython:
      r.language = Language::kPython;
      r.code = "print('ok')";
      break;
    case Kind::kFail:
      r.code = "echo failing >&2; exit 3";
      break;
    case Kind::kTimeout:
      // A child of its own too, so the kill at the deadline has a tree to take down.
      r.code = "sleep 30 & sleep 30";
      r.timeout = std::chrono::milliseconds(200);
      break;
    case Kind::kTimeoutPython:
      // Default limits: served by a pooled sandbox whose python was started ahead.
      r.language = Language::kPython;
      r.code = "import time\ntime.sleep(30)";
      r.timeout = std::chrono::milliseconds(200);
      break;
    case Kind::kCancelEarly:
      // Cancelled before run() is called (the token is cancelled already).
      r.code = "echo never";
      break;
    case Kind::kFiles:
      // Stdin, an input file in, an artifact out: the workspace's paths.
      r.code = "mkdir -p out; cat in.txt - > out/copy.txt; echo wrote";
      r.stdin_data = "from stdin\n";
      r.input_files = {{"in.txt", "from a file\n"}};
      r.artifact_globs = {"out/*.txt"};
      break;
    case Kind::kOom:
      r.language = Language::kPython;
      r.code = "b = bytearray(1 << 30)\nprint('allocated')";
      r.limits.memory_bytes = 64u << 20;
      break;
    case Kind::kForkBomb:
      // Forks until the ceiling refuses one (dash: "Cannot fork", exit 2); the children
      // still sleeping are the init's to kill.
      r.code = "for i in $(seq 1000); do sleep 30 & done; wait";
      r.limits.max_processes = 32;
      break;
    case Kind::kFlood:
      r.code = "head -c 16777216 /dev/zero; echo done >&2";
      r.limits.output_bytes = kFloodCap;
      break;
    case Kind::kCancel:
      r.code = "sleep 30 & sleep 30";
      break;
  }
  return r;
}

namespace {

std::string describe(const RunResult& r) {
  std::string s = std::string(to_string(r.outcome));
  if (r.limit) s += "/" + std::string(to_string(*r.limit));
  s += " exit " + std::to_string(r.exit_code);
  if (r.error) s += " error: " + *r.error;
  if (!r.stderr_data.empty()) s += " stderr: " + r.stderr_data.substr(0, 200);
  return s;
}

std::optional<std::string> expect(bool holds, const std::string& want, const RunResult& r) {
  if (holds) return std::nullopt;
  return "want " + want + ", got " + describe(r);
}

}  // namespace

std::optional<std::string> wrong_outcome(Kind kind, const RunResult& r) {
  switch (kind) {
    case Kind::kOk:
    case Kind::kOkPython:
      return expect(r.outcome == Outcome::kOk && r.stdout_data == "ok\n", "ok, stdout \"ok\"", r);
    case Kind::kFail:
      return expect(r.outcome == Outcome::kFailed && r.exit_code == 3, "failed, exit 3", r);
    case Kind::kTimeout:
    case Kind::kTimeoutPython:
      return expect(r.outcome == Outcome::kTimedOut, "timed_out", r);
    case Kind::kOom:
      return expect(r.outcome == Outcome::kLimitExceeded && r.limit == LimitKind::kMemory &&
                        r.oom_killed && r.stdout_data.empty(),
                    "limit_exceeded/memory, oom_killed", r);
    case Kind::kForkBomb:
      return expect(r.outcome == Outcome::kLimitExceeded && r.limit == LimitKind::kProcesses,
                    "limit_exceeded/processes", r);
    case Kind::kFlood:
      return expect(r.outcome == Outcome::kOk && r.stdout_truncated &&
                        r.stdout_data.size() == kFloodCap && r.stderr_data == "done\n",
                    "ok, stdout truncated at the cap", r);
    case Kind::kCancel:
    case Kind::kCancelEarly:
      return expect(r.outcome == Outcome::kCancelled && r.stdout_data.empty(), "cancelled", r);
    case Kind::kFiles:
      return expect(r.outcome == Outcome::kOk && r.stdout_data == "wrote\n" &&
                        r.artifacts.size() == 1 && r.artifacts[0].path == "out/copy.txt" &&
                        r.artifacts[0].content == "from a file\nfrom stdin\n",
                    "ok, the artifact out/copy.txt with both inputs", r);
  }
  return "unknown kind";
}

}  // namespace cordon::soak

namespace cordon::soak {

std::string_view to_string(SessionCall call) {
  switch (call) {
    case SessionCall::kShFile:
      return "session-sh-file";
    case SessionCall::kPython:
      return "session-python";
    case SessionCall::kFail:
      return "session-fail";
    case SessionCall::kTimeout:
      return "session-timeout";
    case SessionCall::kHostFile:
      return "session-host-file";
  }
  return "?";
}

SessionOptions session_options() {
  SessionOptions options;
  options.base.language = Language::kSh;
  options.base.timeout = std::chrono::seconds(20);
  return options;
}

std::optional<std::string> session_call(BackendSession& session, SessionCall call) {
  RunRequest r = session_options().base;
  const auto outcome_of = [](const RunResult& result) {
    return std::string(to_string(result.outcome)) +
           (result.error ? ": " + *result.error : std::string());
  };
  switch (call) {
    case SessionCall::kShFile:
    case SessionCall::kPython: {
      if (call == SessionCall::kPython) {
        r.language = Language::kPython;
        r.code = "print(6 * 7)";
      } else {
        r.code = "echo $((6 * 7)) > f.txt; cat f.txt";
      }
      const RunResult result = session.run(r, CancelToken{}, nullptr);
      if (result.outcome != Outcome::kOk || result.stdout_data != "42\n") {
        return "ended " + outcome_of(result) + " with '" + result.stdout_data + "'";
      }
      return std::nullopt;
    }
    case SessionCall::kFail: {
      r.code = "exit 3";
      const RunResult result = session.run(r, CancelToken{}, nullptr);
      if (result.outcome != Outcome::kFailed || result.exit_code != 3) {
        return "ended " + outcome_of(result) + ", not failed with exit 3";
      }
      return std::nullopt;
    }
    case SessionCall::kTimeout: {
      r.code = "sleep 30 & sleep 30";
      r.timeout = std::chrono::milliseconds(200);
      const RunResult result = session.run(r, CancelToken{}, nullptr);
      if (result.outcome != Outcome::kTimedOut) return "ended " + outcome_of(result);
      return std::nullopt;
    }
    case SessionCall::kHostFile: {
      if (Status written = session.write_file("host.txt", "from the host"); !written) {
        return "write_file: " + written.error().describe();
      }
      const Result<std::string> read = session.read_file("host.txt", 64);
      if (!read || *read != "from the host") {
        return "read_file: " + (read ? "'" + *read + "'" : read.error().describe());
      }
      return std::nullopt;
    }
  }
  return "unknown call";
}

}  // namespace cordon::soak
