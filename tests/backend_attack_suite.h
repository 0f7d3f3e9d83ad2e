// The attacks every isolating backend must withstand, written once: a value-parameterised
// GoogleTest suite (BackendAttack, backend_attack_suite.cpp) over an AttackTarget, which
// says how to make, run and weaken one backend. Each backend's test binary instantiates
// it with its own target (CORDON_INSTANTIATE_BACKEND_ATTACKS), so the suite runs in every
// configuration that binary runs in (pooled, prestarted, as uid 65534) and under its
// locks; CTest names the tests Isolating/BackendAttack.<Test>/<backend>.
//
// Only isolating backends (namespace, container): the subprocess backend isolates nothing,
// so no escape test or fork bomb is ever pointed at it. It appears here only as the
// unisolated positive control of harmless probes (run_unisolated).
//
// Every attack is judged by host-side evidence and has a positive control where one is
// meaningful: the same probe with the protection in question switched off (a weakened
// backend of the same kind, or the subprocess backend) succeeds, so a broken probe cannot
// read as "blocked". A backend this host cannot run skips with the reason, unless
// CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), which turns the skip into a failure.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cordon/backend.h"
#include "cordon/cancel.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "kernel_features.h"
#include "run_request_support.h"

namespace cordon::testing {

// The protections a positive control switches off (each backend's options have all three).
struct Weakening {
  bool keep_capabilities = false;  // drop_capabilities = false
  bool no_seccomp = false;         // seccomp = false
  bool host_network = false;       // network_namespace = false
};

// A backend's options (NamespaceOptions, ContainerOptions) with `weakening` applied.
template <class Options>
Options weakened(const Weakening& weakening) {
  Options options;
  options.drop_capabilities = !weakening.keep_capabilities;
  options.seccomp = !weakening.no_seccomp;
  options.network_namespace = !weakening.host_network;
  return options;
}

// One isolating backend as the suite sees it. One target per test: set_up() before it,
// tear_down() after it.
class AttackTarget {
 public:
  AttackTarget() = default;
  AttackTarget(const AttackTarget&) = delete;
  AttackTarget& operator=(const AttackTarget&) = delete;
  virtual ~AttackTarget() = default;

  // Makes the backend under test; its probe (an unavailable one skips the test).
  [[nodiscard]] virtual Probe set_up() = 0;
  virtual void tear_down() = 0;
  // The backend set_up() made.
  [[nodiscard]] virtual Backend& backend() = 0;
  // One run through it, checking what the target checks of every run (the namespace
  // target waits for a pooled sandbox first and counts prestarted runs).
  [[nodiscard]] virtual RunResult run(const RunRequest& request, const CancelToken& cancel) = 0;
  // A fresh backend of this kind with `weakening` applied, made on the calling thread (so
  // its sandboxes start in that thread's mount namespace). Never the one under test.
  [[nodiscard]] virtual std::unique_ptr<Backend> make(const Weakening& weakening) const = 0;

  // What differs between the backends, as facts the tests read.
  struct Facts {
    std::string name;  // the backend's name: every run reports it
    // How much longer than the namespace backend a stopped run may take to return (the
    // container backend's `runc kill` and `runc delete`).
    std::chrono::milliseconds stop_slack{0};
    // The capability set a positive control with capabilities kept shows non-empty: the
    // namespace sandbox keeps all of them in its user namespace (CapEff); runc's uid 65534
    // keeps the runtime's default bounding set but no effective ones (CapBnd).
    std::string kept_capability_set;
    // A host submount under a path bound read-only is in the sandbox (the namespace
    // backend binds recursively; runc binds non-recursively, so it is absent).
    bool submount_visible = false;
    // Whether samples carry CPU time without a CPU limit (the container's parent group is
    // a CPU accounting group; the namespace backend makes one only for a CPU limit).
    bool samples_cpu = false;
    // Numbers the code's sleeps use, unique per backend: the host-side checks look for
    // them, and another backend's suite may run at the same time.
    std::string mark;
    std::uint64_t default_process_ceiling = 0;
    // The code talks to a user-space kernel (gVisor's sentry under runsc), not the host's:
    // some probes read differently while the protection they check holds. Its
    // /proc/self/status has no CapAmb, NoNewPrivs or RssFile lines; keyctl is not
    // implemented (EACCES with or without the filter: its denial has no positive control);
    // an unroutable address is EHOSTUNREACH; a write under a read-only bind is EACCES.
    bool user_space_kernel = false;
    // Tests of the suite this target does not meet yet, each with why: skipped, saying so
    // (a gap in the backend's declaration, not of the host, so never a kernel-feature skip).
    std::vector<std::pair<std::string, std::string>> pending;
    // A target whose runs are slow (runsc: ~0.4 s each even pooled) may name the lean set
    // CI runs; the others run in the full tier only (CORDON_TEST_FULL=1, scripts/test.sh
    // --full). Empty: every test, always.
    std::vector<std::string> lean;
  };
  [[nodiscard]] virtual const Facts& facts() const = 0;
};

// Python calling five syscalls the default policy denies; one line each, "<name> ok" or
// its errno's text. Capabilities kept, mount, keyctl and unshare would succeed without
// the filter; without capabilities, keyctl and ptrace(TRACEME).
inline constexpr const char* kSyscallProbe = R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    r = getattr(libc, name)(*args)
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
os.mkdir("/tmp/m")
print("mount", call("mount", b"none", b"/tmp/m", b"tmpfs", 0, None))
print("keyctl", call("syscall", 250, 0, ctypes.c_long(-3), 1))   # KEYCTL_GET_KEYRING_ID session
print("ptrace", call("ptrace", 0, 0, 0, 0))                      # PTRACE_TRACEME
print("bpf", call("syscall", 321, 0, None, 0))                   # BPF_MAP_CREATE
print("unshare", call("unshare", 0x10000000))                    # CLONE_NEWUSER, last
)";

// kSyscallProbe's output when the filter refuses all five.
inline constexpr const char* kAllSyscallsDenied =
    "mount Operation not permitted\nkeyctl Operation not permitted\n"
    "ptrace Operation not permitted\nbpf Operation not permitted\n"
    "unshare Operation not permitted\n";

// A value of the suite: the backend's name (the test name's suffix) and its target.
struct AttackParam {
  std::string name;
  std::unique_ptr<AttackTarget> (*make)();
};

// How gtest (and so the CTest name) shows a value: the backend's name.
inline void PrintTo(const AttackParam& param, std::ostream* os) { *os << param.name; }

// The test name's suffix: the backend's name.
inline std::string attack_param_name(const ::testing::TestParamInfo<AttackParam>& param) {
  return param.param.name;
}

class BackendAttack : public ::testing::TestWithParam<AttackParam> {
 protected:
  void SetUp() override;
  void TearDown() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel = {});
  [[nodiscard]] RunResult run_weakened(const Weakening& weakening, const RunRequest& request);
  // The unisolated control: a plain child process of this test (the subprocess plugin).
  [[nodiscard]] static RunResult run_unisolated(const RunRequest& request);
  // Whether the backend's memory limit for `req`'s limits is RLIMIT_AS per process.
  [[nodiscard]] bool rlimit_as_memory(const RunRequest& req) const;
  [[nodiscard]] Backend& backend() { return target_->backend(); }
  [[nodiscard]] const AttackTarget::Facts& facts() const { return target_->facts(); }

  std::unique_ptr<AttackTarget> target_;
};

// The fixture of a backend's own tests, over the same target as its attack suite: the
// target is set up before each test (skipping when this host cannot run the backend) and
// torn down after it.
template <class Target>
class TargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Probe probe = target_.set_up();
    if (!probe.available) CORDON_SKIP_OR_FAIL(probe.reason);
  }
  void TearDown() override { target_.tear_down(); }
  RunResult run(const RunRequest& request, const CancelToken& cancel = {}) {
    return target_.run(request, cancel);
  }

  Target target_;
};

}  // namespace cordon::testing

// In a backend's test binary: runs the suite against the target `make_target()` returns.
#define CORDON_INSTANTIATE_BACKEND_ATTACKS(backend_name, make_target) \
  CORDON_INSTANTIATE_BACKEND_ATTACK_TARGETS(                          \
      (::cordon::testing::AttackParam{backend_name, make_target}))

// The same over several targets of one binary (AttackParam values, each in parentheses):
// one backend in several configurations, e.g. the container backend under each OCI runtime.
#define CORDON_INSTANTIATE_BACKEND_ATTACK_TARGETS(...)                               \
  INSTANTIATE_TEST_SUITE_P(Isolating, BackendAttack, ::testing::Values(__VA_ARGS__), \
                           ::cordon::testing::attack_param_name)
