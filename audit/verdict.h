// What the audit concludes about one attempt, and the evidence the judges look at.
// judge() is pure: the runner collects the evidence, this decides, tests feed it by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "audit/catalogue.h"
#include "cordon/capabilities.h"
#include "cordon/result.h"

namespace cordon::audit {

enum class AttemptStatus {
  kBlocked,  // the attempt was made and did not get through
  kEscaped,  // it got through: the evidence says how
  kError,    // it could not be judged (the probe did not run, its control did not escape)
  kSkipped,  // not run: it would act on this host, whose backend does not claim to stop it
};

[[nodiscard]] std::string_view to_string(AttemptStatus status);  // "BLOCKED", "ESCAPED", ...
[[nodiscard]] std::optional<AttemptStatus> parse_status(std::string_view text);

// The catalogue's class of the cross-session attempts (session_attempt.h).
inline constexpr std::string_view kSessionClass = "sessions";

struct Finding {
  AttemptStatus status = AttemptStatus::kError;
  std::string evidence;  // a few words
};

// What the host saw around one run of an attempt.
struct Evidence {
  const RunResult* run = nullptr;
  bool listener_reached = false;
  std::vector<std::pair<std::string, std::string>> secrets;  // name, value planted
  bool file_created = false;                                 // kHostFileCreated
  bool file_intact = true;                                   // kHostFileIntact
  std::string tunable_before, tunable_after;                 // kTunable
  std::size_t survivors = 0;                                 // kSurvivors (and others)
  bool victim_alive = true;                                  // kVictim
  std::size_t process_peak = 0;                              // kProcessPeak
  std::uint64_t host_disk_drop = 0;                          // kDisk: free bytes lost
  std::uint64_t host_file_bytes = 0;                         // kDisk: the marker file on the host
  std::string peer_output;       // kCrossRun: the writer's output; kCrossSession: the victim's
  bool peer_ended = false;       // kCrossSession: the victim's call ended during the probe
  bool peer_file_intact = true;  // kCrossSession: the victim's workspace file as planted
  std::int64_t run_ms = 0;       // Backend::run from call to return, set-up and teardown included
  // kOutput: how long past its deadline a run on the same backend and limits that only waits
  // takes to come back (set-up, the kill, teardown)
  std::int64_t baseline_ms = 0;
};

[[nodiscard]] Finding judge(const Attempt& attempt, const Evidence& evidence);

struct AttemptVerdict {
  std::string id;
  std::string threat_class;
  Aspect aspect = Aspect::kNetwork;
  Enforcement claimed = Enforcement::kNone;  // what capabilities() says for `aspect`
  AttemptStatus status = AttemptStatus::kError;
  std::string evidence;
  std::string control;  // the positive control and how it went, in words
  std::int64_t duration_ms = 0;

  // A cross-session attempt against a backend that holds no sessions (with these options):
  // it tests a seam the backend does not have, so it neither backs a claim nor leaves one
  // unproven.
  [[nodiscard]] bool moot() const {
    return status == AttemptStatus::kSkipped && threat_class == kSessionClass;
  }

  // An escape (or an unjudgeable attempt) against a backend that claims to stop it.
  [[nodiscard]] bool contradicts_claim() const {
    return claimed != Enforcement::kNone && status == AttemptStatus::kEscaped;
  }
};

}  // namespace cordon::audit
