// Positive controls of the audit's attempts that cannot run against the subprocess
// backend (and a few that can): the same catalogue entry, run by the audit's own runner
// and judges, escapes once the protection in question is switched off — a NamespaceOptions
// switch, or limits raised past what the attempt takes. So an attempt that reads BLOCKED
// in `cordon audit` is blocked by the sandbox, not broken.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>

#include "audit/runner.h"
#include "audit/scene.h"
#include "cordon/plugin_registry.h"
#include "kernel_features.h"
#include "namespace_backend.h"
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
  // No positive control here: both act on the host if they escape (the audit's canary
  // file, a kernel tunable), no weakened namespace backend can reach either, and escape
  // attempts never run through a backend that does not isolate. Their judges are
  // host-side (the file still there, the tunable's value unchanged).
  if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("the tunable attempt is judged as root");
  EXPECT_STATUS(on(production_, "fs-delete-host-file"), kBlocked);
  EXPECT_STATUS(on(production_, "fs-kernel-tunable"), kBlocked);
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

}  // namespace
}  // namespace cordon::audit
