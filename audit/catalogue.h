// The escape and abuse catalogue as data (catalogue.json, embedded at build time): what
// each attempt runs, which aspect of capabilities() it tests, how it is judged from
// outside the sandbox, and which positive control shows the probe itself works.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/error.h"
#include "cordon/request.h"

namespace cordon::audit {

// How an attempt is judged. Host-side wherever the host can see the effect.
enum class Judge {
  kPrinted,          // the code's own "ESCAPED"/"BLOCKED" line (syscall results, routes)
  kTcpListener,      // a loopback TCP listener of the audit accepted a connection
  kUdpListener,      // a loopback UDP socket of the audit received a datagram
  kAbstractUnix,     // an abstract unix listener of the audit accepted a connection
  kPathUnix,         // a unix listener at a host path accepted a connection
  kCanary,           // a secret planted by the audit shows up in the output
  kHostFileCreated,  // a file appeared in a host dir of the audit
  kHostFileIntact,   // a host canary file of the audit is gone or changed
  kTunable,          // a kernel tunable changed on the host
  kCrossRun,         // a concurrent run's secret shows up in this run's output
  // Another session's secret shows up in this session's call, or that session saw its
  // planted files, processes or sockets touched (session_attempt.h)
  kCrossSession,
  kSurvivors,    // a process of the run is alive on the host after the run
  kVictim,       // a host process the audit started died
  kDeadline,     // the run was not stopped at its deadline
  kMemory,       // the code held more memory than its limit
  kProcessPeak,  // the host saw more of the run's processes than its limit
  kDisk,         // the code wrote past its scratch size (host disk, host file)
  kOutput,       // more output than the cap reached the result
};

// The positive control that shows an attempt would succeed where nothing stops it.
enum class Control {
  kSubprocess,  // run by the audit against the subprocess backend (harmless attempts)
  kRequestEnv,  // run by the audit against the same backend with the canary passed in
  kTest,        // in tests, against a deliberately weakened namespace backend
  kNone,        // the judge is its own control (deadline, output truncation, survivors)
  // In tests (audit_controls_test): the attempt's own probe, its target placeholders
  // pointed at a target inside the sandbox, where it may act. For host-acting attempts
  // whose host target no weakened backend can reach (a host file, a kernel tunable, a
  // host process), and which must never run where nothing isolates.
  kLocalTarget,
  // Run by the audit against the same backend with the attempt's target on the network
  // allow-list (`control_allow_net`): the probe reaches the host listener when the list
  // allows it (issue #16).
  kAllowList,
  // Run by the audit (kCrossSession): the probe and its victim in one session of the same
  // backend, where the probe must reach what the victim planted (session_attempt.h).
  kSameSession,
};

struct Attempt {
  std::string id;
  std::string threat_class;          // "network", "secrets", "filesystem", ...
  Aspect aspect = Aspect::kNetwork;  // the capability whose claim the attempt tests
  std::string title;
  Language language = Language::kSh;
  std::string code;       // prelude included; {{placeholders}} unfilled
  std::string peer_code;  // kCrossRun, kCrossSession: the concurrent (victim's) code
  Judge judge = Judge::kPrinted;
  Control control = Control::kNone;
  // Would act on the host if it escaped (fork bomb, kill -1, disk and memory fill, mount,
  // tunables, deletion): runs only against a backend that claims `aspect` enforced.
  bool host_acting = false;
  std::string require;  // output that proves the probe ran (else: any output)
  std::chrono::milliseconds timeout{5000};
  Limits limits;
  // With entries, the run has this network allow-list ({{placeholders}} filled); such an
  // attempt attacks a claim only backends that carry an allow-list make, and is left out
  // of the audit of the others. `control_allow_net`: the list of the kAllowList control;
  // of a kCrossSession attempt, the victim session's list (allow_net is the attacker's).
  std::vector<std::string> allow_net;
  std::vector<std::string> control_allow_net;
};

struct Catalogue {
  int version = 0;
  std::string hash;  // sha256 of the JSON text: a report is bound to the catalogue it ran
  std::vector<Attempt> attempts;

  [[nodiscard]] const Attempt* find(std::string_view id) const;
};

[[nodiscard]] Result<Catalogue> parse_catalogue(std::string_view json_text);
// The catalogue built into cordon (audit/catalogue.json).
[[nodiscard]] std::string_view builtin_catalogue_text();
[[nodiscard]] Result<Catalogue> builtin_catalogue();

[[nodiscard]] std::string_view to_string(Judge judge);
[[nodiscard]] std::string_view to_string(Control control);

}  // namespace cordon::audit
