// The soak's mix of runs: each kind is a request and the one outcome it must have.
//
// Every kind ends in a way the production path must clean up after: a normal exit, a
// failure, a kill at the deadline, a kill by the memory ceiling, forks refused at the
// process ceiling, output past the capture cap, and a cancel through the API while the
// code runs. Only for isolating backends (never the subprocess backend: the bombs).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/request.h"
#include "cordon/result.h"
#include "cordon/session.h"

namespace cordon::soak {

enum class Kind {
  kOk,
  kOkPython,
  kFail,
  kTimeout,
  kTimeoutPython,
  kOom,
  kForkBomb,
  kFlood,
  kCancel,
  kCancelEarly,
  kFiles,
};

inline constexpr std::array kAllKinds = {Kind::kOk,          Kind::kOkPython,      Kind::kFail,
                                         Kind::kTimeout,     Kind::kTimeoutPython, Kind::kOom,
                                         Kind::kForkBomb,    Kind::kFlood,         Kind::kCancel,
                                         Kind::kCancelEarly, Kind::kFiles};

// The order runs cycle through (run i is kCycle[i % size]): ok runs are 7 of 16, as in
// real use most calls succeed (sh, and python, which a long-lived host serves from
// interpreters started ahead), and each other kind comes once per cycle.
inline constexpr std::array kCycle = {
    Kind::kOk,    Kind::kFail,          Kind::kOkPython, Kind::kTimeout,
    Kind::kOk,    Kind::kOom,           Kind::kOkPython, Kind::kForkBomb,
    Kind::kOk,    Kind::kFlood,         Kind::kOk,       Kind::kCancel,
    Kind::kFiles, Kind::kTimeoutPython, Kind::kOk,       Kind::kCancelEarly};

[[nodiscard]] constexpr Kind kind_of_run(std::size_t index) {
  return kCycle[index % kCycle.size()];
}

[[nodiscard]] std::string_view to_string(Kind kind);

// The request of a run of this kind.
[[nodiscard]] RunRequest request_for(Kind kind);

// How long after the code started a kCancel run is cancelled.
inline constexpr std::chrono::milliseconds kCancelAfter{50};
// The output cap of a kFlood run (per stream), far below what it writes.
inline constexpr std::uint64_t kFloodCap = 64u << 10;

// Why `result` is not what a run of this kind must end with; nullopt when it is.
[[nodiscard]] std::optional<std::string> wrong_outcome(Kind kind, const RunResult& result);

// A session's calls (issue #41): every session of the soak runs its calls in this cycle,
// so each one writes a file and reads it back, runs python, fails, times out (the session
// lives on: the next call checks it) and has a file written and read from the host.
enum class SessionCall { kShFile, kPython, kFail, kTimeout, kHostFile };
inline constexpr std::array kSessionCycle = {SessionCall::kShFile, SessionCall::kPython,
                                             SessionCall::kFail, SessionCall::kTimeout,
                                             SessionCall::kHostFile};

[[nodiscard]] std::string_view to_string(SessionCall call);

// What a soak session is opened with.
[[nodiscard]] SessionOptions session_options();

// One call of this kind in `session`; why it went wrong, or nullopt.
[[nodiscard]] std::optional<std::string> session_call(BackendSession& session, SessionCall call);

}  // namespace cordon::soak
