// Positive controls of the audit's attempts that cannot run against the subprocess
// backend (and a few that can): the same catalogue entry, run by the audit's own runner
// and judges, escapes once the protection in question is switched off — a NamespaceOptions
// switch, or limits raised past what the attempt takes. Host-acting attempts whose host
// target no weakened backend can reach (control "local_target") run their own probe
// against a target inside the sandbox instead, judged from the run's result. So an
// attempt that reads BLOCKED in `cordon audit` is blocked by the sandbox, not broken.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "audit/host_probes.h"
#include "audit/runner.h"
#include "audit/scene.h"
#include "audit/verdict.h"
#include "cordon/plugin_registry.h"
#include "kernel_features.h"
#include "namespace_backend.h"
#include "session_audit_support.h"
#include "test_paths.h"

namespace cordon::audit {
namespace {

class AuditControls : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.discover({cordon::testing::plugin_dir()});
    auto sub = registry_.create("subprocess");
    ASSERT_TRUE(sub.has_value());
    subprocess_ = std::move(*sub);
    const ns::NamespaceBackend probe;
    if (!probe.probe().available) CORDON_SKIP_OR_FAIL(probe.probe().reason);
    auto catalogue = builtin_catalogue();
    ASSERT_TRUE(catalogue.has_value()) << catalogue.error().describe();
    catalogue_ = std::move(*catalogue);
    auto fixture = HostFixture::create();
    ASSERT_TRUE(fixture.has_value()) << fixture.error().describe();
    fixture_ = std::move(*fixture);
  }

  const Attempt& attempt(const char* id) {
    const Attempt* a = catalogue_.find(id);
    EXPECT_NE(a, nullptr) << id;
    return *a;
  }
  Finding on(Backend& backend, const char* id, std::optional<Limits> limits = std::nullopt) {
    const Attempt& a = attempt(id);
    return run_once(backend, a, *fixture_, limits.value_or(a.limits));
  }
  Finding weakened(const ns::NamespaceOptions& options, const char* id,
                   std::optional<Limits> limits = std::nullopt) {
    ns::NamespaceBackend backend(options);
    EXPECT_TRUE(backend.probe().available) << backend.probe().reason;
    return on(backend, id, limits);
  }

  // A kLocalTarget control: `a`'s probe with `targets` pointing it inside the sandbox.
  RunResult retargeted(Backend& backend, const Attempt& a,
                       const std::map<std::string, std::string>& targets, RunRequest request = {}) {
    Result<RunResult> r = run_retargeted(backend, a, *fixture_, targets, std::move(request));
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    return r ? std::move(*r) : RunResult{};
  }

  PluginRegistry registry_;
  BackendPtr subprocess_;
  Catalogue catalogue_;
  std::unique_ptr<HostFixture> fixture_;
  ns::NamespaceBackend production_;
};

#define EXPECT_STATUS(finding, want)                                              \
  do {                                                                            \
    const Finding f_ = (finding);                                                 \
    EXPECT_EQ(f_.status, AttemptStatus::want) << #finding << ": " << f_.evidence; \
  } while (0)

TEST_F(AuditControls, NetworkAttemptsEscapeWithoutTheNetworkNamespace) {
  ns::NamespaceOptions hostnet;
  hostnet.network_namespace = false;
  for (const char* id : {"net-loopback-tcp", "net-loopback-udp", "net-abstract-unix",
                         "net-metadata-route", "net-egress-route"}) {
    EXPECT_STATUS(on(production_, id), kBlocked);
    EXPECT_STATUS(weakened(hostnet, id), kEscaped);
  }
}

TEST_F(AuditControls, SyscallAttemptsEscapeWithoutTheFilter) {
  // With capabilities kept in the sandbox's user namespace, mount, keyctl and unshare
  // succeed once the filter is off: the EPERM under the filter is the filter's.
  ns::NamespaceOptions open;
  open.seccomp = false;
  open.drop_capabilities = false;
  ns::NamespaceOptions filtered_caps = open;
  filtered_caps.seccomp = true;
  for (const char* id : {"sys-mount", "sys-keyctl", "sys-unshare"}) {
    EXPECT_STATUS(weakened(filtered_caps, id), kBlocked);
    EXPECT_STATUS(weakened(open, id), kEscaped);
  }
  ns::NamespaceOptions no_filter;
  no_filter.seccomp = false;
  EXPECT_STATUS(weakened(no_filter, "sys-ptrace"), kEscaped);
  EXPECT_STATUS(weakened(no_filter, "priv-capabilities"), kBlocked);
  EXPECT_STATUS(weakened(open, "priv-capabilities"), kEscaped);
}

TEST_F(AuditControls, ResourceAttemptsEscapeWhenTheLimitIsRaisedPastThem) {
  Limits roomy;
  roomy.memory_bytes = 1ULL << 30;
  roomy.max_processes = 1024;
  roomy.scratch_bytes = 384ULL << 20;
  for (const char* id : {"res-memory-bomb", "res-fork-bomb", "res-disk-fill"}) {
    EXPECT_STATUS(on(production_, id), kBlocked);
    EXPECT_STATUS(on(production_, id, roomy), kEscaped);
  }
}

TEST_F(AuditControls, EnvironmentDumpSeesACanaryThatIsHandedIn) {
  EXPECT_STATUS(on(production_, "env-dump"), kBlocked);
  const Attempt& a = attempt("env-dump");
  EXPECT_STATUS(
      run_once(production_, a, *fixture_, a.limits, {{kEnvCanaryName, fixture_->env_secret()}}),
      kEscaped);
}

TEST_F(AuditControls, DeleteAndTunableAttemptsAreBlocked) {
  // Both act on the host if they escape (the audit's canary file, a kernel tunable), no
  // weakened namespace backend can reach either, and escape attempts never run through a
  // backend that does not isolate. Their judges are host-side (the file still there, the
  // tunable's value unchanged); their positive controls are the *ProbeDeletes* and
  // *ProbeSets* tests below: the same probe, pointed at a target inside the sandbox.
  if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("the tunable attempt is judged as root");
  EXPECT_STATUS(on(production_, "fs-delete-host-file"), kBlocked);
  EXPECT_STATUS(on(production_, "fs-kernel-tunable"), kBlocked);
}

TEST_F(AuditControls, DeleteProbeDeletesACanaryInsideTheSandbox) {
  // {{host_dir}} pointed at the sandbox's working directory (its own /tmp), where the
  // canary and a sibling are planted as input files. The backend collects artifacts from
  // outside, after the run: the sibling's presence shows they were collected, the
  // canary's absence that the probe's rm deleted it.
  Result<Plan> plan = production_.describe_plan(RunRequest{});
  ASSERT_TRUE(plan.has_value()) << plan.error().describe();
  const std::string cwd = plan->cwd;
  RunRequest request;
  request.input_files = {{"w/keep.txt", fixture_->keep_content()}, {"w/sibling.txt", "stays\n"}};
  request.artifact_globs = {"w/*"};
  const RunResult r =
      retargeted(production_, attempt("fs-delete-host-file"), {{"host_dir", cwd}}, request);
  EXPECT_TRUE(r.ok()) << to_string(r.outcome) << ": " << r.stdout_data << r.stderr_data;
  std::vector<std::string> left;
  for (const Artifact& artifact : r.artifacts) left.push_back(artifact.path);
  EXPECT_EQ(left, std::vector<std::string>{"w/sibling.txt"}) << r.stdout_data;
  // A probe that no longer takes its target from the placeholder is refused, not run
  // against the target it names.
  Attempt hardcoded = attempt("fs-delete-host-file");
  hardcoded.code = "rm -f /nonexistent/keep.txt; echo done\n";
  EXPECT_FALSE(run_retargeted(production_, hardcoded, *fixture_, {{"host_dir", cwd}}, {}));
}

TEST_F(AuditControls, TunableProbeSetsATunableTheSandboxOwns) {
  // The host's tunables need host root, which no sandbox id maps to. The sandbox may set
  // its own network namespace's, given CAP_NET_ADMIN there (capabilities kept) and a
  // writable /proc/sys: the strongest stand-in there is, a real sysctl file of procfs
  // written the probe's way. {{tunable}} is pointed at one, {{tunable_value}} at a value
  // valid for it that it does not hold yet. The network namespace stays on, so the host's
  // value is never the one written (checked). The value is read back after the probe:
  // the run's exit status says whether the write took.
  constexpr const char* kOwn = "/proc/sys/net/ipv4/ip_default_ttl";
  const std::string host_before = read_small_file(kOwn);
  ASSERT_FALSE(host_before.empty());
  Attempt a = attempt("fs-kernel-tunable");
  const std::string read_back = "[ \"$(cat " + std::string(kOwn) + ")\" ";
  a.code = read_back + "!= 77 ] || exit 3\n" + a.code + read_back + "= 77 ]\n";
  const auto run_with = [&](const ns::NamespaceOptions& options) {
    if (!options.network_namespace) {
      ADD_FAILURE() << "the sysctl written must be the sandbox's network namespace's";
      return RunResult{};
    }
    ns::NamespaceBackend backend(options);
    return retargeted(backend, a, {{"tunable", kOwn}, {"tunable_value", "77"}});
  };
  ns::NamespaceOptions writable;
  writable.drop_capabilities = false;
  writable.readonly_proc_sys = false;
  const RunResult r = run_with(writable);
  EXPECT_TRUE(r.ok()) << to_string(r.outcome) << " " << r.exit_code << ": " << r.stdout_data
                      << r.stderr_data;
  // The read-back can fail: with /proc/sys read-only the same write is refused.
  ns::NamespaceOptions readonly = writable;
  readonly.readonly_proc_sys = true;
  const RunResult refused = run_with(readonly);
  EXPECT_EQ(refused.exit_code, 1) << refused.stdout_data << refused.stderr_data;
  EXPECT_EQ(read_small_file(kOwn), host_before);
}

TEST_F(AuditControls, KillAllProbeKillsAVictimItMaySignal) {
  EXPECT_STATUS(on(production_, "proc-kill-all"), kBlocked);
  // A victim in the same sandbox, same uid, started before the probe. kill(-1) spares
  // its caller, the shell, which then reaps the victim: `wait` makes its status the run's
  // exit status, 128+SIGKILL when the probe killed it. A victim still alive gets SIGTERM
  // first, so a probe that kills nothing ends the run with 128+SIGTERM, not a timeout.
  Attempt a = attempt("proc-kill-all");
  a.code = "sleep 30 & victim=$!\nkill -0 $victim || exit 3\n" + a.code +
           "kill -TERM $victim 2>/dev/null\nwait $victim\n";
  const RunResult r = retargeted(production_, a, {});
  EXPECT_EQ(r.outcome, Outcome::kFailed) << to_string(r.outcome) << ": " << r.stderr_data;
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.stdout_data << r.stderr_data;
  EXPECT_NE(r.stdout_data.find("done"), std::string::npos) << r.stdout_data;
}

TEST_F(AuditControls, HostActingAttemptsAreSkippedWhereNotClaimed) {
  AuditOptions options;
  for (const char* id : {"res-fork-bomb", "proc-kill-all", "sys-mount", "res-disk-fill"}) {
    const AttemptVerdict v = run_attempt(*subprocess_, attempt(id), *fixture_, options);
    EXPECT_EQ(v.status, AttemptStatus::kSkipped) << id;
    EXPECT_NE(v.evidence.find("would act on this host"), std::string::npos) << v.evidence;
  }
  // And a harmless attempt that subprocess does not stop reads ESCAPED there.
  EXPECT_EQ(run_attempt(*subprocess_, attempt("net-loopback-tcp"), *fixture_, options).status,
            AttemptStatus::kEscaped);
}

TEST_F(AuditControls, ABlockedAttemptWhoseControlFailsReadsError) {
  // A probe that cannot work anywhere (connects to a port nobody listens on) must not
  // read BLOCKED: its subprocess control does not escape either.
  Attempt broken = attempt("net-loopback-tcp");
  broken.code = "print('BLOCKED pretending')\n";
  AuditOptions options;
  options.control_backend = subprocess_.get();
  const AttemptVerdict v = run_attempt(production_, broken, *fixture_, options);
  EXPECT_EQ(v.status, AttemptStatus::kError) << v.evidence;
  EXPECT_NE(v.control.find("subprocess: BLOCKED"), std::string::npos) << v.control;
}

// Runs through another backend and keeps every request it was handed.
class RecordingBackend final : public Backend {
 public:
  explicit RecordingBackend(Backend& inner) : inner_(inner) {}
  [[nodiscard]] std::string_view name() const override { return inner_.name(); }
  [[nodiscard]] std::string_view version() const override { return inner_.version(); }
  [[nodiscard]] Probe probe() const override { return inner_.probe(); }
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override {
    return inner_.capabilities(limits);
  }
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override {
    RunResult result = inner_.run(request, cancel, observer);
    const std::lock_guard lock(mutex_);
    seen_.push_back(request);
    outcomes_.push_back(result.outcome);
    return result;
  }
  [[nodiscard]] std::vector<Outcome> outcomes() {
    const std::lock_guard lock(mutex_);
    return outcomes_;
  }
  [[nodiscard]] std::vector<RunRequest> seen() {
    const std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  Backend& inner_;
  std::mutex mutex_;
  std::vector<RunRequest> seen_;
  std::vector<Outcome> outcomes_;
};

// An audit with an allow-list (`cordon audit --allow-net`, the audit behind `cordon prompt
// --allow-net`) attacks the sandbox as such a run has it: every attempt without a list of
// its own runs under the operator's list (the proxy and its relay are there), the
// allow-list attempts keep theirs, the subprocess controls get none; and the network still
// holds. A backend that cannot carry a list is refused, not audited without it.
// Cross-session attempts (issue #41): across two namespace sessions every one is BLOCKED,
// and its positive control (probe and victim in one session) escapes. Again on the backend
// as `cordon mcp` holds it (a pool with python started ahead), whose sessions of the default
// shape come from its session pool: sessions built ahead share nothing either.
TEST_F(AuditControls, SessionAttemptsAreBlockedAcrossSessionsAndReachWithinOne) {
  testing::expect_session_attempts_blocked(production_, catalogue_);
  ns::NamespaceOptions pooled;
  pooled.pool_size = 2;
  pooled.prestart_python = true;
  ns::NamespaceBackend with_pool(pooled);
  ASSERT_TRUE(with_pool.prepare());
  ASSERT_NE(with_pool.session_pool(), nullptr);
  EXPECT_TRUE(with_pool.session_pool()->wait_ready(std::chrono::steady_clock::now() +
                                                   cordon_test::slack(std::chrono::seconds(30))));
  testing::expect_session_attempts_blocked(with_pool, catalogue_);
  EXPECT_GE(with_pool.pooled_sessions(), 2U);
}

// The cross-session path itself sees an escape: with the network namespace off, two
// sessions share the host's abstract unix sockets.
TEST_F(AuditControls, ACrossSessionProbeEscapesWhereSessionsShareTheNetwork) {
  ns::NamespaceOptions shared;
  shared.network_namespace = false;
  EXPECT_STATUS(weakened(shared, "sess-abstract-unix"), kEscaped);
}

// Where no session can be held the seam does not exist: SKIPPED with the reason, and moot
// for the claims (nothing ran: the subprocess backend refuses before any code).
TEST_F(AuditControls, SessionAttemptsAreMootWhereNoSessionIsHeld) {
  AuditOptions options;
  options.only = {"sess-signal"};
  const auto verdicts = run_attempts(*subprocess_, catalogue_, options);
  ASSERT_TRUE(verdicts.has_value()) << verdicts.error().describe();
  ASSERT_EQ(verdicts->size(), 1U);
  EXPECT_EQ(verdicts->front().status, AttemptStatus::kSkipped);
  EXPECT_TRUE(verdicts->front().moot());
  EXPECT_NE(verdicts->front().evidence.find("does not hold sessions"), std::string::npos)
      << verdicts->front().evidence;
}

TEST_F(AuditControls, AnAuditWithAnAllowListRunsEveryOtherAttemptUnderIt) {
  ns::NamespaceBackend production;
  RecordingBackend recording(production);
  AuditOptions options;
  options.only = {"net-loopback-tcp", "net-egress-route", "net-allow-denied-port"};
  options.network.allow = {"audit-operator.invalid", "127.0.0.2:7"};
  options.control_backend = subprocess_.get();
  const auto verdicts = run_attempts(recording, catalogue_, options);
  ASSERT_TRUE(verdicts.has_value()) << verdicts.error().describe();
  ASSERT_EQ(verdicts->size(), 3U);
  for (const AttemptVerdict& v : *verdicts) {
    EXPECT_EQ(v.status, AttemptStatus::kBlocked)
        << v.id << ": " << v.evidence << " / " << v.control;
  }
  const std::vector<RunRequest> seen = recording.seen();
  std::size_t under_operator_list = 0;
  for (const RunRequest& r : seen) {
    ASSERT_TRUE(r.network.any()) << r.code;  // nothing ran on the backend without a list
    if (r.network.allow == options.network.allow) ++under_operator_list;
    const bool own_list = r.network.allow.size() == 1;
    EXPECT_TRUE(r.network.allow == options.network.allow || own_list) << r.network.allow[0];
  }
  EXPECT_EQ(under_operator_list, 2U);  // net-loopback-tcp, net-egress-route
  // The sandboxes with a list were built and ran the probes (a refused list would read as
  // a sandbox error, and a probe that never ran proves nothing).
  for (const Outcome o : recording.outcomes()) EXPECT_EQ(o, Outcome::kOk);
  EXPECT_GE(seen.size(), 4U);  // net-allow-denied-port and its allow-list control

  const auto refused = run_attempts(*subprocess_, catalogue_, options);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("cannot carry a network allow-list"), std::string::npos);
}

}  // namespace
}  // namespace cordon::audit
