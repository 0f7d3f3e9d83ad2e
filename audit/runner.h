// Runs catalogue attempts through Backend::run and judges each from outside.
//
// An attempt that would act on the host if it escaped runs only against a backend whose
// capabilities() claim its aspect enforced; otherwise it is SKIPPED. A BLOCKED attempt
// is only believed when its positive control escapes: against the subprocess backend
// (harmless attempts), or against the same backend with the canary handed in; when the
// control does not escape, the attempt reads ERROR, never BLOCKED.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/catalogue.h"
#include "audit/verdict.h"
#include "cordon/backend.h"
#include "cordon/cancel.h"

namespace cordon::audit {

class HostFixture;

struct AuditOptions {
  std::vector<std::string> only;       // attempt ids; empty = every attempt
  Backend* control_backend = nullptr;  // the subprocess backend, for kSubprocess controls
  // Tests only (positive controls): run host-acting attempts whatever the claims, and with
  // these limits instead of the attempt's (the judges keep the attempt's as the nominal).
  bool allow_host_acting = false;
  std::optional<Limits> limits_override;
  // The allow-list the audited backend runs every attempt without a list of its own under
  // (`cordon audit --allow-net`, the audit behind `cordon prompt --allow-net`): the sandbox
  // as a description with that list has it, relay and proxy included. Controls on the
  // subprocess backend never get it. A backend that cannot carry a list is refused.
  NetworkAccess network;
  std::function<void(const AttemptVerdict&)> progress;  // after each attempt
  // Checked before each attempt: once cancelled, run_attempts() stops and fails
  // (kUnavailable, "the audit was stopped"); an attempt already running ends first. A `cordon mcp`
  // stopped during the audit of its first start.
  CancelToken cancel;
};

// The attempts run_attempts() runs against `backend`, in its order (`options.only`, and
// none of the allow-list attempts on a backend that carries no list). Unknown ids in
// `only` are left out here; run_attempts() refuses them.
[[nodiscard]] std::vector<const Attempt*> planned_attempts(const Backend& backend,
                                                           const Catalogue& catalogue,
                                                           const AuditOptions& options);

// Every selected attempt against `backend`, in catalogue order, but for the network
// allow-list attempts on a backend that carries no allow-list (it makes no claim they could
// test). Fails only when the host fixture cannot be planted or `only` names an unknown
// attempt.
[[nodiscard]] Result<std::vector<AttemptVerdict>> run_attempts(Backend& backend,
                                                               const Catalogue& catalogue,
                                                               const AuditOptions& options);

// One attempt, `asked` at the nearest memory and process limits `backend` accepts;
// `fixture` from HostFixture::create().
[[nodiscard]] AttemptVerdict run_attempt(Backend& backend, const Attempt& asked,
                                         HostFixture& fixture, const AuditOptions& options);

// One run of `attempt` through `backend` and its judgement, without control or claims.
// `extra_env` is added to the request (the kRequestEnv control); `network` is the run's
// allow-list unless the attempt has one of its own.
[[nodiscard]] Finding run_once(Backend& backend, const Attempt& attempt, HostFixture& fixture,
                               const Limits& limits,
                               std::vector<std::pair<std::string, std::string>> extra_env = {},
                               const NetworkAccess& network = {});

// The kLocalTarget controls (tests): one run of `attempt`'s own probe with `targets`
// replacing the scene's placeholder values, so that it acts on something inside the
// sandbox. `request` carries what the control needs besides (input files, artifact
// globs); its code, language, timeout and limits are the attempt's. Every name in
// `targets` must be a placeholder of the probe, so a probe that no longer takes its
// target from one fails here instead of being run against its real, host-side target.
// The caller judges the result: the attempt's own judge looks at the host-side target.
[[nodiscard]] Result<RunResult> run_retargeted(Backend& backend, const Attempt& attempt,
                                               HostFixture& fixture,
                                               const std::map<std::string, std::string>& targets,
                                               RunRequest request);

}  // namespace cordon::audit
