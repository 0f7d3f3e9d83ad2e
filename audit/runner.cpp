#include "audit/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "audit/scene.h"
#include "audit/session_attempt.h"
#include "cordon/claims.h"

namespace cordon::audit {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// `request` with the attempt's code, language, timeout and limits.
RunRequest request_for(const Attempt& attempt, std::string code, const Limits& limits,
                       RunRequest request = {}) {
  request.code = std::move(code);
  request.language = attempt.language;
  request.timeout = attempt.timeout;
  request.limits = limits;
  return request;
}

// Counts the run's processes on the host while it runs (kProcessPeak).
class Sampler {
 public:
  explicit Sampler(Scene& scene) : scene_(scene) {
    if (!scene.process_needle().empty()) thread_ = std::thread([this] { loop(); });
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    while (!done_) {
      scene_.record_process_count(host_processes_with(scene_.process_needle()).size());
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  Scene& scene_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// An allow-list attempt tests a claim only a backend that carries a list makes.
bool applies_to(const Attempt& attempt, const Backend& backend) {
  return attempt.allow_net.empty() || carries_allow_list(backend.capabilities(attempt.limits));
}

std::string describe(const Finding& f) {
  return std::string(to_string(f.status)) + " (" + f.evidence + ")";
}

// An allow-list of the catalogue with its placeholders filled.
Result<NetworkAccess> filled_list(const Scene& scene, const std::vector<std::string>& entries) {
  NetworkAccess out;
  for (const std::string& entry : entries) {
    Result<std::string> filled = scene.fill(entry);
    if (!filled) return std::unexpected(filled.error());
    out.allow.push_back(std::move(*filled));
  }
  return out;
}

// A cross-session attempt (session_attempt.h): across two sessions of `backend`, or, as
// its positive control, in one. A backend that holds no sessions has no such seam: the
// attempt is SKIPPED with its reason.
Finding run_sessions_once(Backend& backend, const Attempt& attempt, HostFixture& fixture,
                          const Limits& limits, bool one_session) {
  Result<std::unique_ptr<Scene>> scene = Scene::prepare(attempt, fixture);
  if (!scene) return {AttemptStatus::kError, "cannot set up: " + scene.error().describe()};
  Result<std::string> probe = (*scene)->fill(attempt.code);
  if (!probe) return {AttemptStatus::kError, probe.error().describe()};
  Result<std::string> peer = (*scene)->fill(attempt.peer_code);
  if (!peer) return {AttemptStatus::kError, peer.error().describe()};
  // The attacker's session has the attempt's list, the victim's (and the one session of
  // the control, the victim itself) `control_allow_net`.
  Result<NetworkAccess> own = filled_list(**scene, attempt.allow_net);
  if (!own) return {AttemptStatus::kError, own.error().describe()};
  Result<NetworkAccess> victims = filled_list(**scene, attempt.control_allow_net);
  if (!victims) return {AttemptStatus::kError, victims.error().describe()};
  SessionAttack a{.base = request_for(attempt, "", limits),
                  .peer_network = std::move(*victims),
                  .peer_code = std::move(*peer),
                  .probe_code = std::move(*probe),
                  .mark = (*scene)->value("session_mark"),
                  .secret = (*scene)->value("secret")};
  a.base.network = std::move(*own);
  Result<SessionRuns> runs =
      one_session ? run_in_one_session(backend, a) : run_across_sessions(backend, a);
  if (!runs) {
    if (runs.error().code == ErrorCode::kUnavailable) {
      return {AttemptStatus::kSkipped, "skipped: " + runs.error().message};
    }
    return {AttemptStatus::kError, "cannot open a session: " + runs.error().describe()};
  }
  Evidence evidence = (*scene)->observe(runs->attack, runs->peer_output);
  evidence.peer_ended = runs->peer_ended;
  evidence.peer_file_intact = runs->peer_file_intact;
  return judge(attempt, evidence);
}

// A BLOCKED verdict stands only when its positive control `c` escaped; else it is ERROR.
void believe_only_with(const Finding& c, AttemptVerdict& v) {
  if (c.status != AttemptStatus::kEscaped && v.status == AttemptStatus::kBlocked) {
    v.status = AttemptStatus::kError;
    v.evidence = "positive control did not escape; " + v.evidence;
  }
}

// Whether and how the attempt's positive control ran; may turn BLOCKED into ERROR.
void apply_control(Backend& backend, const Attempt& attempt, HostFixture& fixture,
                   const Limits& limits, const AuditOptions& options, AttemptVerdict& v) {
  switch (attempt.control) {
    case Control::kNone:
      v.control = "none needed: the host-side judge is its own control";
      return;
    case Control::kTest:
      v.control = "in tests, against a weakened namespace policy";
      return;
    case Control::kLocalTarget:
      v.control = "in tests, the same probe against a target inside the sandbox";
      return;
    case Control::kRequestEnv: {
      const Finding c = run_once(backend, attempt, fixture, limits,
                                 {{kEnvCanaryName, fixture.env_secret()}}, options.network);
      v.control = "same backend, canary passed in the request: " + describe(c);
      believe_only_with(c, v);
      return;
    }
    case Control::kAllowList: {
      Attempt allowed = attempt;
      allowed.allow_net = attempt.control_allow_net;
      const Finding c = run_once(backend, allowed, fixture, limits);
      v.control = "same backend, the target on the allow-list: " + describe(c);
      believe_only_with(c, v);
      return;
    }
    case Control::kSameSession: {
      const Finding c = run_sessions_once(backend, attempt, fixture, limits, true);
      v.control = "same backend, probe and victim in one session: " + describe(c);
      believe_only_with(c, v);
      return;
    }
    case Control::kSubprocess:
      break;
  }
  if (backend.name() == "subprocess") {
    v.control = "this backend is the control";
    return;
  }
  if (options.control_backend == nullptr) {
    v.control = "not run: no subprocess backend";
    return;
  }
  const Finding c = run_once(*options.control_backend, attempt, fixture, limits);
  v.control = "subprocess: " + describe(c);
  believe_only_with(c, v);
}

}  // namespace

Finding run_once(Backend& backend, const Attempt& attempt, HostFixture& fixture,
                 const Limits& limits, std::vector<std::pair<std::string, std::string>> extra_env,
                 const NetworkAccess& network) {
  if (attempt.judge == Judge::kCrossSession) {
    return run_sessions_once(backend, attempt, fixture, limits, false);
  }
  Result<std::unique_ptr<Scene>> scene = Scene::prepare(attempt, fixture);
  if (!scene) return {AttemptStatus::kError, "cannot set up: " + scene.error().describe()};
  Result<std::string> code = (*scene)->fill(attempt.code);
  if (!code) return {AttemptStatus::kError, code.error().describe()};
  RunRequest request = request_for(attempt, std::move(*code), limits);
  request.env = std::move(extra_env);
  if (attempt.allow_net.empty()) {
    request.network = network;
  } else {
    Result<NetworkAccess> own = filled_list(**scene, attempt.allow_net);
    if (!own) return {AttemptStatus::kError, own.error().describe()};
    request.network = std::move(*own);
  }

  std::string peer_output;
  std::thread peer;
  if (attempt.judge == Judge::kCrossRun) {
    Result<std::string> peer_code = (*scene)->fill(attempt.peer_code);
    if (!peer_code) return {AttemptStatus::kError, peer_code.error().describe()};
    RunRequest peer_request = request_for(attempt, std::move(*peer_code), limits);
    peer_request.network = request.network;
    peer = std::thread([&backend, &peer_output, peer_request] {
      const RunResult r = backend.run(peer_request, CancelToken{}, nullptr);
      peer_output = r.stdout_data + r.stderr_data + r.error.value_or("");
    });
    // Let the writer write before the reader looks (the reader waits more inside).
    std::this_thread::sleep_for(milliseconds(300));
  }
  // The output judge bounds how long the flood takes to come back after its deadline; a slow
  // host (an emulated guest takes seconds to set up, kill and remove a container) moves that
  // bound, so it is measured here: the same backend and limits, a run that only waits,
  // killed at the same deadline; what it takes beyond the deadline.
  std::int64_t baseline_ms = 0;
  if (attempt.judge == Judge::kOutput) {
    RunRequest idle = request_for(
        attempt,
        attempt.language == Language::kPython ? "import time\ntime.sleep(3600)\n" : "sleep 3600",
        limits);
    idle.env = request.env;
    idle.network = request.network;
    const auto idle_start = Clock::now();
    (void)backend.run(idle, CancelToken{}, nullptr);
    baseline_ms = std::max<std::int64_t>(
        0, std::chrono::duration_cast<milliseconds>(Clock::now() - idle_start).count() -
               effective_timeout(idle).count());
  }
  RunResult result;
  const auto run_start = Clock::now();
  {
    const Sampler sampler(**scene);
    result = backend.run(request, CancelToken{}, nullptr);
  }
  const auto run_end = Clock::now();
  if (peer.joinable()) peer.join();
  Evidence evidence = (*scene)->observe(result, peer_output);
  evidence.run_ms = std::chrono::duration_cast<milliseconds>(run_end - run_start).count();
  evidence.baseline_ms = baseline_ms;
  return judge(attempt, evidence);
}

Result<RunResult> run_retargeted(Backend& backend, const Attempt& attempt, HostFixture& fixture,
                                 const std::map<std::string, std::string>& targets,
                                 RunRequest request) {
  for (const auto& [name, value] : targets) {
    if (attempt.code.find("{{" + name + "}}") == std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "attempt " + attempt.id + ": no {{" + name + "}} in its code to retarget");
    }
  }
  Result<std::unique_ptr<Scene>> scene = Scene::prepare(attempt, fixture);
  if (!scene) return std::unexpected(scene.error());
  Result<std::string> code = (*scene)->fill(attempt.code, targets);
  if (!code) return std::unexpected(code.error());
  return backend.run(request_for(attempt, std::move(*code), attempt.limits, std::move(request)),
                     CancelToken{}, nullptr);
}

namespace {

// `attempt` with its memory and process limits brought into the ranges `declared` accepts:
// a backend may not take an attempt's small limit (gVisor's sandbox needs more than runc's
// container to start), and then it is attacked, and judged, at the nearest one it does.
Attempt within_ranges(const Attempt& attempt, const Capabilities& declared) {
  Attempt out = attempt;
  const auto clamp = [&](std::optional<std::uint64_t>& value, Aspect aspect) {
    const Capability* c = declared.find(aspect);
    if (!value || c == nullptr || !c->range) return;
    value = std::clamp(*value, c->range->min, c->range->max);
  };
  clamp(out.limits.memory_bytes, Aspect::kMemory);
  clamp(out.limits.max_processes, Aspect::kProcesses);
  return out;
}

}  // namespace

AttemptVerdict run_attempt(Backend& backend, const Attempt& asked, HostFixture& fixture,
                           const AuditOptions& options) {
  const Attempt attempt = within_ranges(asked, backend.capabilities(asked.limits));
  const auto start = Clock::now();
  AttemptVerdict v;
  v.id = attempt.id;
  v.threat_class = attempt.threat_class;
  v.aspect = attempt.aspect;
  v.claimed = backend.capabilities(attempt.limits).level(attempt.aspect);
  const Limits limits = options.limits_override.value_or(attempt.limits);
  if (attempt.host_acting && v.claimed != Enforcement::kEnforced && !options.allow_host_acting) {
    v.status = AttemptStatus::kSkipped;
    v.evidence = "skipped: would act on this host (" + std::string(to_string(attempt.aspect)) +
                 " is " + std::string(to_string(v.claimed)) + ")";
    v.control = "-";
    return v;
  }
  if (!applies_to(attempt, backend)) {
    v.status = AttemptStatus::kSkipped;
    v.evidence = "skipped: the backend carries no network allow-list (it refuses --allow-net)";
    v.control = "-";
    return v;
  }
  const Finding f = run_once(backend, attempt, fixture, limits, {}, options.network);
  v.status = f.status;
  v.evidence = f.evidence;
  if (v.status == AttemptStatus::kBlocked) {
    apply_control(backend, attempt, fixture, limits, options, v);
  } else {
    v.control = v.status == AttemptStatus::kEscaped ? "not needed: it escaped" : "-";
  }
  v.duration_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  return v;
}

std::vector<const Attempt*> planned_attempts(const Backend& backend, const Catalogue& catalogue,
                                             const AuditOptions& options) {
  std::vector<const Attempt*> out;
  for (const Attempt& attempt : catalogue.attempts) {
    if (!options.only.empty() &&
        std::ranges::find(options.only, attempt.id) == options.only.end()) {
      continue;
    }
    // An allow-list attempt attacks a claim this backend does not make: not part of its
    // audit at all (a SKIPPED verdict would leave its network claims unproven).
    if (!applies_to(attempt, backend)) continue;
    out.push_back(&attempt);
  }
  return out;
}

Result<std::vector<AttemptVerdict>> run_attempts(Backend& backend, const Catalogue& catalogue,
                                                 const AuditOptions& options) {
  for (const std::string& id : options.only) {
    if (catalogue.find(id) == nullptr) {
      return fail(ErrorCode::kNotFound, "no attempt '" + id + "' in the catalogue");
    }
  }
  if (options.network.any() && !carries_allow_list(backend.capabilities(Limits{}))) {
    return fail(ErrorCode::kUnavailable, "the " + std::string(backend.name()) +
                                             " backend cannot carry a network allow-list");
  }
  Result<std::unique_ptr<HostFixture>> fixture = HostFixture::create();
  if (!fixture) return std::unexpected(fixture.error());
  std::vector<AttemptVerdict> out;
  for (const Attempt* attempt : planned_attempts(backend, catalogue, options)) {
    if (options.cancel.cancelled()) {
      return fail(ErrorCode::kUnavailable,
                  "the audit was stopped after " + std::to_string(out.size()) + " attempts");
    }
    out.push_back(run_attempt(backend, *attempt, **fixture, options));
    if (options.progress) options.progress(out.back());
  }
  return out;
}

}  // namespace cordon::audit
