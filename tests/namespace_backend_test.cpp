// The namespace backend end to end, judged by host-side evidence: the attacks every
// isolating backend must withstand run here through the shared suite
// (backend_attack_suite.h, instantiated below with NamespaceTarget); this file adds what
// only the namespace backend does (its user namespaces and uid slots, its default ceilings,
// its leftovers, its warm pool and set-up process). Every attack has a positive control:
// the same probe with the protection in question switched off (a NamespaceOptions switch,
// or the subprocess backend) succeeds, so a broken probe cannot read as "blocked".
//
// Kernel features: when one is missing the test skips with the reason, unless
// CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), which turns the skip into a failure.
//
// As root (CI) everything below runs. As an unprivileged user (setpriv --reuid=65534 ...)
// the expected differences are: limits fall back to rlimits (no cgroup delegation on a v1
// host), so the OOM test expects a MemoryError/killed run instead of oom_killed, and the
// fork bomb is bounded by RLIMIT_NPROC per uid; the distinct-host-uid test is root-only.
// CTest runs it that way too (namespace_backend_test_unprivileged: tests/run_unprivileged.sh
// runs this binary as uid 65534 from a world-readable copy of the build tree, pointing it
// at the copy with CORDON_TEST_PLUGIN_DIR, CORDON_TEST_CLI_BINARY, CORDON_PLUGIN_PATH and
// CORDON_LIBEXEC_DIR).
//
// With CORDON_NAMESPACE_POOL_SIZE set (CTest: namespace_backend_test_pooled, and with
// CORDON_NAMESPACE_PRESTART=python,sh namespace_backend_test_prestarted) the plugin
// builds sandboxes ahead of time, and the target waits before each run until one is
// ready, so every run with the default limits goes through a pooled sandbox; the
// NamespacePool tests below check the pool itself in every configuration.
#include "namespace_backend.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "audit/host_probes.h"
#include "backend_attack_suite.h"
#include "cgroup_test_support.h"
#include "claims_match.h"
#include "cordon/cancel.h"
#include "cordon/lock_file.h"
#include "cordon/net/address.h"
#include "cordon/net/resolver.h"
#include "cordon/plugin_registry.h"
#include "cordon/proc/ns_init_channel.h"
#include "cordon/session.h"
#include "kernel_features.h"
#include "loopback_server.h"
#include "proc_test_support.h"
#include "test_paths.h"
#include "uid_slot.h"

extern char** environ;

namespace cordon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

using audit::host_processes_with;  // the audit's host-side instruments
using testing::py;
using testing::sh;

// The namespace backend through its plugin, as the suites see it; with a pool asked for
// (CORDON_NAMESPACE_POOL_SIZE: the pooled and prestarted CTest variants) the backend object
// itself, built with the options the plugin would read from the same variables, since the
// suite looks into its pools and only C crosses the plugin boundary (plugin_abi.h).
class NamespaceTarget final : public testing::AttackTarget {
 public:
  Probe set_up() override {
    registry_.discover({testing::plugin_dir()});  // tests make more backends through it
    if (const char* pool = std::getenv("CORDON_NAMESPACE_POOL_SIZE"); pool != nullptr) {
      ns::NamespaceOptions options;
      options.pool_size = std::strtoul(pool, nullptr, 10);
      const std::string_view pre = testing::env_or("CORDON_NAMESPACE_PRESTART", "");
      options.prestart_python = pre.find("python") != std::string_view::npos;
      options.prestart_sh = pre == "sh" || pre.ends_with(",sh") || pre.starts_with("sh,");
      auto direct = std::make_unique<ns::NamespaceBackend>(options);
      ns_ = direct.get();
      backend_ = std::move(direct);
      return backend_->probe();
    }
    auto backend = registry_.create("namespace");
    if (!backend) return {false, "create the namespace plugin: " + backend.error().describe()};
    backend_ = std::move(*backend);
    return backend_->probe();
  }
  void tear_down() override {
    ns_ = nullptr;
    backend_.reset();
  }
  Backend& backend() override { return *backend_; }
  // The warm pool, when CORDON_NAMESPACE_POOL_SIZE asks for one.
  WarmPool<ns::BuiltSandbox>* pool() {
    ns::NamespaceBackend* const d = direct();
    return d != nullptr ? d->pool() : nullptr;
  }
  // The backend object, while backend_ is still the one built directly (a test may replace
  // backend_ with one made through the registry).
  ns::NamespaceBackend* direct() const {
    return ns_ != nullptr && backend_.get() == ns_ ? ns_ : nullptr;
  }
  RunResult run(const RunRequest& req, const CancelToken& cancel) override {
    // One ready sandbox is enough (a run of another thread may hold the other).
    if (auto* p = pool()) {
      EXPECT_TRUE(p->wait_ready(Clock::now() + seconds(10), 1)) << p->last_error();
    }
    // With CORDON_NAMESPACE_PRESTART=python,sh (CTest: namespace_backend_test_prestarted), a
    // python or sh run of the default shape (limits, environment, no stdin, code in argv) is
    // handed to an interpreter started ahead: checked by the backend's counter.
    ns::NamespaceBackend* const ns_backend = direct();
    auto* started_pool = ns_backend != nullptr ? ns_backend->prestart_pool(req.language) : nullptr;
    const bool prestartable = started_pool != nullptr && !req.stdin_data && req.env.empty() &&
                              !req.network.any() && !req.limits.memory_bytes &&
                              !req.limits.max_processes && !req.limits.cpu_time &&
                              !req.limits.scratch_bytes && req.code.size() < 64 * 1024 &&
                              req.code.find('\0') == std::string::npos;
    if (prestartable) {
      EXPECT_TRUE(started_pool->wait_ready(Clock::now() + seconds(10), 1))
          << started_pool->last_error();
    }
    const std::uint64_t prestarted_before =
        ns_backend != nullptr && started_pool != nullptr ? ns_backend->prestarted_runs() : 0;
    // The counter is the backend's: it tells about this run only when no other run (a test
    // running two at once) overlapped it.
    const bool first = in_flight_.fetch_add(1) == 0;
    const std::uint64_t started = runs_started_.fetch_add(1);
    RunResult r = backend_->run(req, cancel, nullptr);
    in_flight_.fetch_sub(1);
    const bool alone = first && runs_started_.load() == started + 1;
    // (A request refused before anything starts never reaches a pool.)
    if (ns_backend != nullptr && prestartable && alone &&
        !r.error.value_or("").starts_with("invalid request")) {
      EXPECT_EQ(ns_backend->prestarted_runs(), prestarted_before + 1) << r.error.value_or("");
    }
    EXPECT_EQ(r.backend.name, "namespace");
    return r;
  }
  std::unique_ptr<Backend> make(const testing::Weakening& weakening) const override {
    return std::make_unique<ns::NamespaceBackend>(
        testing::weakened<ns::NamespaceOptions>(weakening));
  }
  const Facts& facts() const override {
    static const Facts kFacts{.name = "namespace",
                              .stop_slack = milliseconds(0),
                              .kept_capability_set = "CapEff",
                              .submount_visible = true,
                              .samples_cpu = false,
                              .mark = "31",
                              .default_process_ceiling = ns::kDefaultProcessCeiling,
                              .user_space_kernel = false,
                              .pending = {},
                              .lean = {}};
    return kFacts;
  }

  PluginRegistry registry_;
  BackendPtr backend_;
  ns::NamespaceBackend* ns_ = nullptr;  // backend_ when built directly (pool variants)
  std::atomic<int> in_flight_{0};       // runs inside run() now
  std::atomic<std::uint64_t> runs_started_{0};
};

}  // namespace
}  // namespace cordon

namespace cordon::testing {
CORDON_INSTANTIATE_BACKEND_ATTACKS("namespace", []() -> std::unique_ptr<AttackTarget> {
  return std::make_unique<NamespaceTarget>();
});
}  // namespace cordon::testing

namespace cordon {
namespace {

// What only the namespace backend does, through the same target.
class NamespaceTest : public testing::TargetTest<NamespaceTarget> {
 protected:
  // A backend with one protection switched off, for positive controls.
  static RunResult run_with(const ns::NamespaceOptions& options, const RunRequest& req) {
    ns::NamespaceBackend b(options);
    EXPECT_TRUE(b.probe().available) << b.probe().reason;
    return b.run(req, {}, nullptr);
  }

  PluginRegistry& registry_ = target_.registry_;
  BackendPtr& backend_ = target_.backend_;
};

// The filter's EPERM is not a missing capability's: with capabilities kept (in the
// sandbox's own user namespace) mount, keyctl and unshare succeed without the filter, and
// are still refused with it. (ptrace(TRACEME) is refused by the kernel there because the
// init holds fewer capabilities than the tracee; the shared suite's control without
// capabilities shows it succeed.) The runc container has no such control: its uid 65534
// holds no effective capability to keep.
TEST_F(NamespaceTest, DeniedSyscallsAreTheFiltersEvenWithCapabilitiesKept) {
  ns::NamespaceOptions caps;
  caps.drop_capabilities = false;
  const RunResult denied = run_with(caps, py(testing::kSyscallProbe));
  EXPECT_EQ(denied.stdout_data, testing::kAllSyscallsDenied)
      << denied.stderr_data << denied.error.value_or("");
  ns::NamespaceOptions open = caps;
  open.seccomp = false;
  const RunResult with_caps = run_with(open, py(testing::kSyscallProbe));
  EXPECT_NE(with_caps.stdout_data.find("mount ok\nkeyctl ok\n"), std::string::npos)
      << with_caps.stdout_data << with_caps.stderr_data;
  EXPECT_NE(with_caps.stdout_data.find("unshare ok\n"), std::string::npos) << with_caps.stdout_data;
}

// The set-up process dies before cordon's "go" byte (issue #11, item 16): the write hits
// a pipe without a reader. An embedder with SIGPIPE at its default disposition must
// survive it and get a sandbox_error; were a SIGPIPE raised, it would kill this test.
TEST(NamespaceEmbedding, ASetUpProcessDeadBeforeGoIsASandboxErrorNotASigpipe) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  struct sigaction old{};
  ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old), 0);
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t old_mask;
  ASSERT_EQ(::pthread_sigmask(SIG_UNBLOCK, &pipe_set, &old_mask), 0);

  ns::NamespaceOptions options;
  options.before_go_for_test = [](pid_t setup_process) {
    ::kill(setup_process, SIGKILL);
    // Until it is dead (a zombie: its fds, the go pipe's read end among them, are closed).
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(setup_process), &info, WEXITED | WNOWAIT);
  };
  ns::NamespaceBackend backend(options);
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  const RunResult r = backend.run(sh("echo never"), {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  EXPECT_NE(r.error.value_or("").find("release the sandbox set-up"), std::string::npos)
      << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "");
  // The same backend still runs code (nothing of the failed run is left in the way).
  ns::NamespaceBackend fine;
  EXPECT_EQ(fine.run(sh("echo fine"), {}, nullptr).stdout_data, "fine\n");

  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old, nullptr);
}

// ---- limits ----

TEST_F(NamespaceTest, RunWithoutLimitsReportsTheDefaultCeilings) {
  const RunResult r = run(sh("true"));
  ASSERT_TRUE(r.ok()) << r.error.value_or("") << r.stderr_data;
  std::optional<Enforced> memory;
  std::optional<Enforced> processes;
  for (const auto& e : r.enforced) {
    if (e.aspect == Aspect::kMemory) memory = e;
    if (e.aspect == Aspect::kProcesses) processes = e;
  }
  ASSERT_TRUE(memory.has_value());
  ASSERT_TRUE(processes.has_value());
  EXPECT_EQ(memory->value, "512 MiB");
  EXPECT_EQ(processes->value, "256");
  if (::geteuid() == 0) {
    EXPECT_NE(memory->mechanism.find("cgroup"), std::string::npos) << memory->mechanism;
    EXPECT_NE(processes->mechanism.find("cgroup"), std::string::npos) << processes->mechanism;
  }
  // And capabilities() says the same, without a request's limits.
  const Capabilities caps = backend_->capabilities(Limits{});
  EXPECT_EQ(caps.find(Aspect::kMemory)->value, "512 MiB");
  EXPECT_EQ(caps.find(Aspect::kProcesses)->value, "256");
  EXPECT_NE(caps.level(Aspect::kMemory), Enforcement::kNone);
  EXPECT_NE(caps.level(Aspect::kProcesses), Enforcement::kNone);
}

// What `cordon backends` claims for memory and processes is what a run reports as
// enforced: the same mechanism and value (the claim once said "swap excluded where the
// host accounts it" while runs reported memory.memsw.limit_in_bytes, swap included).
TEST_F(NamespaceTest, CapabilitiesNameTheMechanismARunReportsAsEnforced) {
  Limits asked;
  asked.memory_bytes = 96U << 20;
  asked.max_processes = 32;
  asked.cpu_time = std::chrono::seconds(3);
  for (const Limits& limits : {Limits{}, asked}) {
    RunRequest req = sh("true");
    req.limits = limits;
    const RunResult r = run(req);
    ASSERT_TRUE(r.ok()) << r.error.value_or("") << r.stderr_data;
    const Capabilities caps = backend_->capabilities(limits);
    // Every aspect, in the same words (one declaration renders both, issue #14).
    cordon::testing::expect_run_enforces_what_is_claimed(r, caps);
    cordon::testing::expect_plan_names_what_is_claimed(*backend_, req);
    for (const Aspect aspect : {Aspect::kMemory, Aspect::kProcesses}) {
      const auto ran = std::ranges::find(r.enforced, aspect, &Enforced::aspect);
      ASSERT_NE(ran, r.enforced.end()) << to_string(aspect);
      const Capability* claimed = caps.find(aspect);
      ASSERT_NE(claimed, nullptr);
      EXPECT_EQ(claimed->mechanism, ran->mechanism) << to_string(aspect);
      EXPECT_EQ(claimed->value, ran->value) << to_string(aspect);
    }
    // And the words about swap follow the mechanism in force.
    const Capability* memory = caps.find(Aspect::kMemory);
    if (memory->mechanism.find("memsw") != std::string::npos) {
      EXPECT_NE(memory->detail.find("RAM and swap together"), std::string::npos) << memory->detail;
    }
    EXPECT_EQ(memory->detail.find("swap excluded"), std::string::npos) << memory->detail;
  }
}

// ---- process tree ----

TEST_F(NamespaceTest, OverlappingRunsCannotSeeEachOther) {
  // Sleep durations unique to this test (so sleeps of tests running in parallel don't
  // count), longer on a slow host so that the two runs still overlap there.
  const int f = cordon_test::time_factor();
  const std::string a_sleep = std::to_string(f) + ".217";
  const std::string b_sleep = "0." + std::to_string(700 + 17 * f);
  RunResult a, b;
  std::thread ta([&] {
    a = run(sh("echo a > /tmp/mine-a; sleep " + a_sleep + "; ls /tmp; ls /proc | grep -c '^[0-9]'",
               cordon_test::slack(seconds(10))));
  });
  std::this_thread::sleep_for(milliseconds(300));
  std::set<std::string> host_uids;
  std::thread tb([&] {
    b = run(sh("echo b > /tmp/mine-b; sleep " + b_sleep + "; ls /tmp; ls /proc | grep -c '^[0-9]'",
               cordon_test::slack(seconds(10))));
  });
  // Host side, while both run: the two sandboxes' sleeps run as different host uids. Looked
  // for until both are seen or a's sleep must be over: a slow host (the guest under
  // emulation) may take longer than the stagger to start b.
  const auto give_up = Clock::now() + cordon_test::slack(milliseconds(1217));
  do {
    std::this_thread::sleep_for(milliseconds(50));
    std::vector<pid_t> sleeps = host_processes_with(a_sleep);
    for (const pid_t pid : host_processes_with(b_sleep)) sleeps.push_back(pid);
    std::set<std::string> seen;
    for (const pid_t pid : sleeps) {
      const auto st = testing::read_file("/proc/" + std::to_string(pid) + "/status").value_or("");
      const auto at = st.find("Uid:\t");
      if (at != std::string::npos) seen.insert(st.substr(at + 5, st.find('\t', at + 5) - at - 5));
    }
    seen.erase("0");
    if (seen.size() > host_uids.size()) host_uids = seen;
  } while (host_uids.size() < 2 && Clock::now() < give_up);
  ta.join();
  tb.join();
  // Each sees its own file only, and only its own processes (init, sh, ls, grep).
  EXPECT_EQ(a.stdout_data.substr(0, a.stdout_data.find('\n')), "mine-a") << a.stdout_data;
  EXPECT_EQ(b.stdout_data.substr(0, b.stdout_data.find('\n')), "mine-b") << b.stdout_data;
  EXPECT_LE(std::stoi(a.stdout_data.substr(a.stdout_data.find('\n') + 1)), 4);
  if (::geteuid() == 0) {
    EXPECT_GE(host_uids.size(), 2u) << "concurrent sandboxes must not share a host uid";
  }
}

// ---- nothing left behind ----

struct Snapshot {
  std::set<std::string> mounts, cgroups, runtime, tmp;
  bool operator==(const Snapshot&) const = default;
};

std::set<std::string> lines(const std::string& path) {
  std::set<std::string> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) out.insert(l);
  return out;
}

std::set<std::string> entries(const fs::path& dir, const std::string& prefix = "") {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename();
    if (n.starts_with(prefix)) out.insert(n);
  }
  return out;
}

// A run's bundle mount (…/bundles/<pid>-<n>-<m>/…) made by a process not in `owners`: the
// container tests that ctest runs beside this one mount their scratch there meanwhile.
bool others_bundle_mount(const std::string& mountinfo_line, const std::vector<pid_t>& owners) {
  std::istringstream in(mountinfo_line);
  std::string id, parent, dev, root, point;
  in >> id >> parent >> dev >> root >> point;
  const auto at = point.find("/bundles/");
  if (at == std::string::npos) return false;
  const std::string rest = point.substr(at + 9);
  const pid_t pid = static_cast<pid_t>(std::atoi(rest.c_str()));
  return std::find(owners.begin(), owners.end(), pid) == owners.end();
}

// Cgroups named for `owners` (cordon-<pid>-*) only: other test processes that ctest runs
// in parallel make their own groups beside ours. /tmp: entries owned by a sandbox uid
// (the uid range) or named cordon-ns*, which a sandbox or this backend could leave.
Snapshot snapshot(const std::vector<pid_t>& owners) {
  Snapshot s;
  for (const std::string& l : lines("/proc/self/mountinfo")) {
    if (!others_bundle_mount(l, owners)) s.mounts.insert(l);
  }
  for (const auto& [ctrl, parent] : testing::cordon_group_parents()) {
    for (const pid_t owner : owners) {
      for (const auto& e : entries(parent, "cordon-" + std::to_string(owner) + "-")) {
        if (!testing::is_cordon_leaf(e, owner)) s.cgroups.insert(ctrl + ":" + e);
      }
    }
  }
  s.runtime = entries(ns::default_runtime_dir());
  for (const auto& e : fs::directory_iterator("/tmp")) {
    struct stat st{};
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    const std::string n = e.path().filename();
    if (st.st_uid >= 200000 || n.starts_with("cordon-ns")) s.tmp.insert(n);
  }
  return s;
}

TEST_F(NamespaceTest, NothingLeftAfterABatchOrAfterCordonIsKilledMidRun) {
  // A private runtime dir (uid-slot files), so parallel test processes cannot differ it.
  testing::ScratchDir runtime;
  ::setenv("CORDON_RUNTIME_DIR", runtime.path.c_str(), 1);
  backend_.reset();  // the fixture's, with its pool if there is one
  const Snapshot before = snapshot({::getpid()});
  auto fresh = registry_.create("namespace");
  ASSERT_TRUE(fresh.has_value());
  backend_ = std::move(*fresh);
  RunRequest limited = sh("echo x > /tmp/f; sleep 0.1");
  limited.limits.memory_bytes = 64u << 20;
  limited.limits.max_processes = 16;
  (void)run(limited);
  (void)run(sh("sleep 5", milliseconds(200)));
  (void)run(sh("setsid sleep 32.5 & exit 3"));

  // A cordon CLI SIGKILLed while its sandbox runs: the init dies with it (PDEATHSIG), the
  // kernel kills the namespace; its limit groups are swept by the next backend.
  const std::string code = "sleep 33.25";
  const pid_t cli =
      testing::spawn_cli({"run", "-b", "namespace", "--memory", "64M", "-t", "20s", "-c", code});
  ASSERT_GT(cli, 0);
  const auto until = Clock::now() + seconds(5);
  while (host_processes_with("33.25").size() < 2 && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_FALSE(host_processes_with("sleep 33.25").empty() && host_processes_with("33.25").empty());
  ::kill(cli, SIGKILL);
  int st = 0;
  ::waitpid(cli, &st, 0);
  const auto gone_until = Clock::now() + seconds(3);
  std::vector<pid_t> left;
  do {
    std::vector<pid_t> all = host_processes_with("33.25");
    left.clear();
    for (pid_t p : all) {
      const auto cmd = testing::read_file("/proc/" + std::to_string(p) + "/cmdline").value_or("");
      if (cmd.starts_with("sleep")) left.push_back(p);
    }
    if (left.empty()) break;
    std::this_thread::sleep_for(milliseconds(10));
  } while (Clock::now() < gone_until);
  EXPECT_TRUE(left.empty()) << "the sandbox outlived the killed cordon";
  backend_.reset();  // a pool's ready sandboxes go with their backend
  // With a pool (namespace_backend_test_pooled) the killed cordon also had sandboxes built
  // ahead; they die with it (parent-death signal) but, on a loaded machine, a moment later
  // than its running sandbox, each still holding its uid slot. A sweep takes only a slot
  // nobody holds (a held one is a live sandbox's), so wait, boundedly, until none is held:
  // what the next backend then leaves is the test.
  const auto slots_free_until = Clock::now() + seconds(5);
  while (Clock::now() < slots_free_until) {
    bool held = false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(runtime.path, ec)) {
      const std::string name = entry.path().filename();
      if (!name.starts_with("uid-slot-")) continue;
      const auto fd = try_lock_file(entry.path(), LockOpen::kCreateOrOpen);
      held = held || (fd && !fd->valid());
    }
    if (!held) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  // The next backend sweeps what the killed one left (its cgroups).
  {
    ns::NamespaceBackend sweeper;
    EXPECT_TRUE(sweeper.prepare());
  }
  const Snapshot after = snapshot({::getpid(), cli});
  ::unsetenv("CORDON_RUNTIME_DIR");
  EXPECT_EQ(before.mounts, after.mounts);
  EXPECT_EQ(before.cgroups, after.cgroups);
  EXPECT_EQ(before.runtime, after.runtime);
  EXPECT_EQ(before.tmp, after.tmp);
}

TEST_F(NamespaceTest, CapabilitiesArePrecise) {
  Limits limits;
  limits.memory_bytes = 128u << 20;
  limits.max_processes = 10;
  const Capabilities caps = backend_->capabilities(limits);
  EXPECT_TRUE(caps.isolates());
  EXPECT_EQ(caps.find(Aspect::kNetwork)->mechanism, "network namespace with loopback only");
  EXPECT_EQ(caps.find(Aspect::kFilesystem)->mechanism,
            "fresh root, /usr read-only, tmpfs /tmp 64 MiB");
  EXPECT_EQ(caps.find(Aspect::kProcessTree)->mechanism, "PID namespace");
  EXPECT_EQ(
      caps.find(Aspect::kSyscallFilter)->mechanism.rfind("seccomp cordon-default v1 sha256:", 0),
      0u);
  EXPECT_EQ(caps.level(Aspect::kDisk), Enforcement::kEnforced);
  if (::geteuid() == 0) {
    EXPECT_EQ(caps.level(Aspect::kMemory), Enforcement::kEnforced);
    EXPECT_EQ(caps.level(Aspect::kProcesses), Enforcement::kEnforced);
  }
}

// ---- the warm pool (NamespaceOptions::pool_size) ----

ns::NamespaceOptions with_pool(std::size_t size) {
  ns::NamespaceOptions o;
  o.pool_size = size;
  return o;
}

// Prints how long (in clock ticks, 1/100 s) the sandbox's init had existed when the code
// started: a pooled sandbox was built before the run, a fresh one a moment before.
constexpr const char* kInitAge =
    "def started(p):\n"
    "    s = open(p).read()\n"
    "    return int(s[s.rindex(')') + 2:].split()[19])\n"
    "print('age', started('/proc/self/stat') - started('/proc/1/stat'))\n";

// The age that tells a pooled sandbox (ready_and_aged) from one built for the run, in
// clock ticks (100 a second): 30 on a real machine, wider on a slow host.
long aged_ticks() { return 30L * cordon_test::time_factor(); }

long init_age(const RunResult& r) {
  const auto at = r.stdout_data.find("age ");
  if (at == std::string::npos) return -1;
  return std::strtol(r.stdout_data.c_str() + at + 4, nullptr, 10);
}

// Waits until the pool is full, then a while longer, so that a pooled sandbox is
// unmistakably older than the code the next run starts in it.
void ready_and_aged(WarmPool<ns::BuiltSandbox>& pool) {
  ASSERT_TRUE(pool.wait_ready(Clock::now() + cordon_test::slack(seconds(10)))) << pool.last_error();
  std::this_thread::sleep_for(cordon_test::slack(milliseconds(400)));
}

// cordon-ns-init processes whose parent is this test process (pooled sandboxes waiting).
std::vector<pid_t> waiting_inits() {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const auto stat = testing::read_file(e.path() / "stat");
    if (!stat || stat->find("(cordon-ns-init) ") == std::string::npos) continue;
    const std::string rest = stat->substr(stat->rfind(')') + 2);
    // "S <ppid> ...": zombies (state Z) are sandboxes already killed.
    if (rest[0] == 'Z') continue;
    if (std::strtol(rest.c_str() + 2, nullptr, 10) == ::getpid()) out.push_back(std::stoi(name));
  }
  return out;
}

TEST(NamespacePool, AReadySandboxServesOneRunAndNothingCarriesOver) {
  ns::NamespaceBackend b(with_pool(1));
  if (!b.probe().available) CORDON_SKIP_OR_FAIL(b.probe().reason);
  auto* pool = b.pool();
  ASSERT_NE(pool, nullptr);

  ready_and_aged(*pool);
  RunRequest first = py(std::string(kInitAge) +
                        "print(open('data/in.txt').read().strip())\n"
                        "open('/tmp/left', 'w').write('x')\n"
                        "open('/dev/shm/left', 'w').write('x')\n");
  first.input_files = {{"data/in.txt", "abc\n"}};
  const RunResult r1 = b.run(first, {}, nullptr);
  ASSERT_TRUE(r1.ok()) << r1.error.value_or("") << r1.stderr_data;
  // Built before the run (>= 0.4 s before the code), and the init wrote the input file.
  EXPECT_GE(init_age(r1), aged_ticks()) << r1.stdout_data;
  EXPECT_NE(r1.stdout_data.find("abc"), std::string::npos);

  ready_and_aged(*pool);
  const RunResult r2 =
      b.run(py(std::string(kInitAge) +
               "import os\n"
               "print(os.path.exists('/tmp/left'), os.path.exists('/dev/shm/left'),"
               " os.path.exists('data'))\n"),
            {}, nullptr);
  ASSERT_TRUE(r2.ok()) << r2.error.value_or("") << r2.stderr_data;
  EXPECT_GE(init_age(r2), aged_ticks()) << r2.stdout_data;
  EXPECT_NE(r2.stdout_data.find("False False False"), std::string::npos) << r2.stdout_data;
}

// The order travels in the control message when it fits (kInlineOrderMaxBytes), else in a
// memfd: either way, pooled or built for the run, the code and its files arrive whole.
TEST(NamespacePool, OrdersOnEitherSideOfTheInlineSizeArriveWhole) {
  ns::NamespaceBackend b(with_pool(1));
  if (!b.probe().available) CORDON_SKIP_OR_FAIL(b.probe().reason);
  auto* pool = b.pool();
  ASSERT_NE(pool, nullptr);
  for (const std::size_t bytes : {std::size_t{16}, std::size_t{ns::kInlineOrderMaxBytes} / 2,
                                  std::size_t{ns::kInlineOrderMaxBytes} * 8}) {
    std::string data(bytes, '\0');
    for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>('a' + (i * 7) % 26);
    for (const bool pooled : {true, false}) {
      if (pooled) ready_and_aged(*pool);
      RunRequest req = sh("cat in.txt");
      if (!pooled) req.limits.memory_bytes = 96u << 20;  // not the pool's shape: built for it
      req.input_files = {{"in.txt", data}};
      const RunResult r = b.run(req, {}, nullptr);
      ASSERT_TRUE(r.ok()) << bytes << " " << pooled << " " << r.error.value_or("") << r.stderr_data;
      EXPECT_EQ(r.stdout_data, data) << bytes << " bytes, pooled " << pooled;
    }
  }
}

TEST(NamespacePool, OtherLimitsBuildTheirOwnSandbox) {
  ns::NamespaceBackend b(with_pool(1));
  if (!b.probe().available) CORDON_SKIP_OR_FAIL(b.probe().reason);
  auto* pool = b.pool();
  ASSERT_NE(pool, nullptr);
  ready_and_aged(*pool);
  RunRequest req = py(kInitAge);
  req.limits.memory_bytes = 96u << 20;
  const RunResult r = b.run(req, {}, nullptr);
  ASSERT_TRUE(r.ok()) << r.error.value_or("") << r.stderr_data;
  EXPECT_LT(init_age(r), aged_ticks()) << r.stdout_data;
  EXPECT_EQ(pool->ready_count(), 1u);  // untouched
  const bool memory_96 = std::ranges::any_of(r.enforced, [](const Enforced& e) {
    return e.aspect == Aspect::kMemory && e.value == "96 MiB";
  });
  EXPECT_TRUE(memory_96);
}

TEST(NamespacePool, AFileTheInitCannotWriteIsASandboxErrorNamingIt) {
  ns::NamespaceBackend b(with_pool(1));
  if (!b.probe().available) CORDON_SKIP_OR_FAIL(b.probe().reason);
  ready_and_aged(*b.pool());
  // "a" is both a file and the directory of "a/b": the second one written must fail.
  RunRequest req = sh("echo never");
  req.input_files = {{"a", "x"}, {"a/b", "y"}};
  const RunResult r = b.run(req, {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  EXPECT_NE(r.error.value_or("").find("start the code: write an input file /tmp/a"),
            std::string::npos)
      << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "");
}

TEST(NamespacePool, ASandboxKilledWhileItWaitedIsReplacedByAFreshOne) {
  ns::NamespaceBackend b(with_pool(1));
  if (!b.probe().available) CORDON_SKIP_OR_FAIL(b.probe().reason);
  ASSERT_TRUE(b.pool()->wait_ready(Clock::now() + seconds(10)));
  const std::vector<pid_t> inits = waiting_inits();
  ASSERT_EQ(inits.size(), 1u);
  ASSERT_EQ(::kill(inits[0], SIGKILL), 0);
  const auto until = Clock::now() + seconds(3);
  while (!waiting_inits().empty() && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(waiting_inits().empty());
  const RunResult r = b.run(py(kInitAge), {}, nullptr);
  ASSERT_TRUE(r.ok()) << r.error.value_or("");
  EXPECT_LT(init_age(r), aged_ticks()) << r.stdout_data;  // built for the run
}

TEST(NamespacePool, NothingOfThePoolOutlivesItsBackend) {
  testing::ScratchDir runtime;
  ::setenv("CORDON_RUNTIME_DIR", runtime.path.c_str(), 1);
  const Snapshot before = snapshot({::getpid()});
  {
    ns::NamespaceBackend b(with_pool(2));
    if (!b.probe().available) {
      ::unsetenv("CORDON_RUNTIME_DIR");
      CORDON_SKIP_OR_FAIL(b.probe().reason);
    }
    ASSERT_TRUE(b.pool()->wait_ready(Clock::now() + seconds(10)));
    EXPECT_EQ(waiting_inits().size(), 2u);
    EXPECT_TRUE(b.run(sh("true"), {}, nullptr).ok());
    if (::geteuid() == 0) {  // an ordinary user on this v1 host gets no cgroups
      EXPECT_NE(snapshot({::getpid()}).cgroups, before.cgroups);  // the pool holds some
    }
  }
  const Snapshot after = snapshot({::getpid()});
  ::unsetenv("CORDON_RUNTIME_DIR");
  EXPECT_TRUE(waiting_inits().empty());
  EXPECT_EQ(before.cgroups, after.cgroups);
  EXPECT_EQ(before.runtime, after.runtime);
  EXPECT_EQ(before.tmp, after.tmp);
}

// A pooled run ends on its init's report: the result comes while the used sandbox (its
// init, namespaces, limit groups, uid slot) still waits for the pool to end it, which the
// pool does once the runs are over, or sooner when `size` used ones wait. Nothing is left
// after the backend goes.
TEST(NamespacePool, ResultsComeBeforeTheTeardownAndNothingIsLeftAfter) {
  testing::ScratchDir runtime;
  ::setenv("CORDON_RUNTIME_DIR", runtime.path.c_str(), 1);
  const Snapshot before = snapshot({::getpid()});
  {
    ns::NamespaceBackend b(with_pool(2));
    if (!b.probe().available) {
      ::unsetenv("CORDON_RUNTIME_DIR");
      CORDON_SKIP_OR_FAIL(b.probe().reason);
    }
    auto* pool = b.pool();
    ASSERT_TRUE(pool->wait_ready(Clock::now() + seconds(10))) << pool->last_error();
    {
      // As if another run were in flight all along: used sandboxes wait for their end.
      WarmPool<ns::BuiltSandbox>::Busy busy(pool);
      const RunResult r = b.run(sh("echo out; exit 3"), {}, nullptr);
      EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("");
      EXPECT_EQ(r.exit_code, 3);
      EXPECT_EQ(r.stdout_data, "out\n");
      EXPECT_EQ(pool->retired_count(), 1u);
      // Its init waits to be ended (ready ones wait for their code): one more than ready.
      EXPECT_EQ(waiting_inits().size(), pool->ready_count() + 1);
      for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(pool->wait_ready(Clock::now() + seconds(10), 1)) << pool->last_error();
        const RunResult more = b.run(sh("true"), {}, nullptr);
        EXPECT_TRUE(more.ok()) << more.error.value_or("");
        EXPECT_LE(pool->retired_count(), 2u);
        EXPECT_LE(pool->ready_count(), 2u);
        EXPECT_LE(waiting_inits().size(), 4u);
      }
    }
    // The runs are over: every used sandbox is ended, and the pool fills up again.
    const auto until = Clock::now() + seconds(10);
    while (pool->retired_count() > 0 && Clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(pool->retired_count(), 0u);
    ASSERT_TRUE(pool->wait_ready(Clock::now() + seconds(10))) << pool->last_error();
    EXPECT_EQ(waiting_inits().size(), 2u);
  }
  const Snapshot after = snapshot({::getpid()});
  ::unsetenv("CORDON_RUNTIME_DIR");
  EXPECT_TRUE(waiting_inits().empty());
  EXPECT_EQ(before.mounts, after.mounts);
  EXPECT_EQ(before.cgroups, after.cgroups);
  EXPECT_EQ(before.runtime, after.runtime);
  EXPECT_EQ(before.tmp, after.tmp);
}

// Creating the backend, probing it, asking its capabilities and a plan (what `cordon
// backends` and `cordon plan` do) touch nothing: the uid-slot file a killed cordon left
// (root only: slots are root's) is still there, and no pool starts. prepare() sweeps it.
TEST(NamespacePrepare, OnlyPrepareSweepsWhatADeadCordonLeft) {
  if (::geteuid() != 0) GTEST_SKIP() << "uid slots are taken only when cordon runs as root";
  const testing::ScratchDir runtime;
  const fs::path stale = fs::path(runtime.path) / "uid-slot-7.lock";
  std::ofstream(stale) << "";
  const std::set<std::string> before = testing::tree_of(runtime.path);
  ns::NamespaceOptions options;
  options.runtime_dir = runtime.path;
  options.pool_size = 1;
  ns::NamespaceBackend backend(options);
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  EXPECT_FALSE(backend.capabilities(Limits{}).aspects.empty());
  EXPECT_TRUE(backend.describe_plan(sh("echo planned")));
  EXPECT_EQ(testing::tree_of(runtime.path), before) << "construction, probe or plan touched it";
  EXPECT_EQ(backend.spawner_pid(), -1) << "a helper was started before prepare()";

  ASSERT_TRUE(backend.prepare());
  EXPECT_FALSE(fs::exists(stale)) << "prepare() did not sweep " << stale;
  ASSERT_NE(backend.pool(), nullptr) << "prepare() starts the pool";
  EXPECT_TRUE(backend.prepare());
  const RunResult r = backend.run(sh("echo ran"), {}, nullptr);
  EXPECT_EQ(r.stdout_data, "ran\n") << r.error.value_or("");
}

// ---- the network allow-list (issue #16) ----

// An HTTP server on the host's loopback, answering every request with its request line.
class HostHttpServer {
 public:
  HostHttpServer()
      : server_([](int c) {
          const std::string head = testing::read_http_head(c);
          const std::string body = "host saw: " + head.substr(0, head.find("\r\n"));
          const std::string reply =
              "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
              "\r\nConnection: close\r\n\r\n" + body;
          (void)::write(c, reply.data(), reply.size());
        }) {}
  [[nodiscard]] std::uint16_t port() const { return server_.port(); }

 private:
  testing::LoopbackServer server_;
};

// What the code tries: an allowed name through the proxy, a name not on the list, the host's
// loopback port directly (the sandbox's loopback is its own), its own resolver (it has none
// that works), and whether the relay is in its session.
std::string network_probe(std::uint16_t port) {
  const std::string p = std::to_string(port);
  return "import os, socket, urllib.request, urllib.error\n"
         "print('proxy', os.environ.get('HTTPS_PROXY'), os.environ.get('http_proxy'))\n"
         "print(urllib.request.urlopen('http://api.test:" +
         p +
         "/ok', timeout=10).read().decode())\n"
         "try:\n"
         "    urllib.request.urlopen('http://other.test:" +
         p +
         "/', timeout=10)\n"
         "    print('other: reached')\n"
         "except urllib.error.HTTPError as e:\n"
         "    print('other:', e.code)\n"
         "try:\n"
         "    socket.create_connection(('127.0.0.1', " +
         p +
         "), timeout=3)\n"
         "    print('direct: connected')\n"
         "except OSError:\n"
         "    print('direct: refused')\n"
         "try:\n"
         "    socket.getaddrinfo('api.test', 80)\n"
         "    print('dns: resolved')\n"
         "except OSError:\n"
         "    print('dns: none')\n"
         "print('relay in my session:', any('cordon-relay' in open(f'/proc/{q}/comm').read()\n"
         "      for q in os.listdir('/proc') if q.isdigit() and int(q) != 1\n"
         "      and os.getsid(int(q)) == os.getsid(0)))\n";
}

ns::NamespaceOptions with_test_resolver(ns::NamespaceOptions options) {
  options.resolver_for_test = std::make_shared<net::StaticResolver>(
      std::map<std::string, std::vector<net::IpAddress>, std::less<>>{
          {"api.test", {*net::IpAddress::parse("127.0.0.1")}},
          {"other.test", {*net::IpAddress::parse("127.0.0.1")}}});
  return options;
}

void expect_allow_list_held(const RunResult& r, std::uint16_t port) {
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  const std::string& out = r.stdout_data;
  EXPECT_NE(out.find("proxy http://127.0.0.1:3128 http://127.0.0.1:3128"), std::string::npos)
      << out;
  EXPECT_NE(out.find("host saw: GET /ok HTTP/1.1"), std::string::npos) << out;
  EXPECT_NE(out.find("other: 403"), std::string::npos) << out;
  EXPECT_NE(out.find("direct: refused"), std::string::npos) << out;
  EXPECT_NE(out.find("dns: none"), std::string::npos) << out;
  EXPECT_NE(out.find("relay in my session: False"), std::string::npos) << out;
  ASSERT_TRUE(r.network.has_value());
  ASSERT_EQ(r.network->connections.size(), 2U);
  const NetConnection& allowed = r.network->connections[0];
  EXPECT_TRUE(allowed.allowed) << allowed.why;
  EXPECT_EQ(allowed.host, "api.test");
  EXPECT_EQ(allowed.port, port);
  EXPECT_EQ(allowed.address, "127.0.0.1");
  EXPECT_GT(allowed.bytes_out, 0U);
  EXPECT_GT(allowed.bytes_in, 0U);
  const NetConnection& denied = r.network->connections[1];
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.host, "other.test");
  EXPECT_FALSE(denied.why.empty());
  const auto network = std::ranges::find(r.enforced, Aspect::kNetwork, &Enforced::aspect);
  ASSERT_NE(network, r.enforced.end());
  EXPECT_NE(network->mechanism.find("cordon's proxy"), std::string::npos) << network->mechanism;
  EXPECT_NE(network->value.value_or("").find("api.test:" + std::to_string(port)),
            std::string::npos);
}

RunRequest network_request(std::uint16_t port) {
  RunRequest request;
  request.language = Language::kPython;
  request.code = network_probe(port);
  request.timeout = std::chrono::seconds(30);
  // The name by port; the loopback address it resolves to must be allowed as an address.
  request.network.allow = {"api.test:" + std::to_string(port), "127.0.0.1"};
  return request;
}

TEST(NamespaceNetwork, AnAllowedNameIsReachedThroughTheProxyAndNothingElse) {
  HostHttpServer server;
  ns::NamespaceBackend backend(with_test_resolver({}));
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  expect_allow_list_held(backend.run(network_request(server.port()), {}, nullptr), server.port());
}

// A pooled sandbox was built before the run's proxy existed: the socket's directory comes
// with the order.
TEST(NamespaceNetwork, APooledSandboxReachesItsRunsProxy) {
  HostHttpServer server;
  ns::NamespaceOptions options;
  options.pool_size = 1;
  ns::NamespaceBackend backend(with_test_resolver(options));
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  ASSERT_TRUE(backend.prepare());
  ASSERT_NE(backend.pool(), nullptr);
  ready_and_aged(*backend.pool());
  RunRequest request = network_request(server.port());
  request.code += kInitAge;
  const RunResult r = backend.run(request, {}, nullptr);
  expect_allow_list_held(r, server.port());
  EXPECT_GE(init_age(r), aged_ticks()) << "not a pooled sandbox: " << r.stdout_data;
}

// A loopback entry and a name entry, reached by the clients the description names, with the
// variables as the sandbox sets them: curl, urllib, and urllib with an explicit proxy
// handler, all of which honour NO_PROXY (issue #40: 127.0.0.1 there sent them to the
// sandbox's own loopback, refused, while the run said no connection was asked for).
TEST(NamespaceNetwork, CurlAndUrllibReachALoopbackEntryAndANameThroughTheProxy) {
  HostHttpServer server;  // the host's 127.0.0.1 only
  ns::NamespaceOptions options;
  options.resolver_for_test = std::make_shared<net::StaticResolver>(
      std::map<std::string, std::vector<net::IpAddress>, std::less<>>{
          {"api.test", {*net::IpAddress::parse("127.0.0.1")}},
          {"localhost", {*net::IpAddress::parse("127.0.0.1")}}});
  ns::NamespaceBackend backend(options);
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  ASSERT_TRUE(fs::exists("/usr/bin/curl")) << "scripts/install-deps.sh installs curl";
  const std::string port = std::to_string(server.port());
  RunRequest request;
  request.language = Language::kPython;
  request.timeout = std::chrono::seconds(60);
  request.network.allow = {"127.0.0.1:" + port, "localhost:" + port, "api.test:" + port};
  request.code =
      "import os, subprocess, urllib.request\n"
      "explicit = urllib.request.build_opener(\n"
      "    urllib.request.ProxyHandler({'http': os.environ['http_proxy']}))\n"
      "for host in ['127.0.0.1', 'localhost', 'api.test']:\n"
      "    url = 'http://' + host + ':" +
      port +
      "/' + host\n"
      "    for name, get in [\n"
      "            ('urllib', lambda: urllib.request.urlopen(url, timeout=10).read().decode()),\n"
      "            ('explicit', lambda: explicit.open(url, timeout=10).read().decode()),\n"
      "            ('curl', lambda: subprocess.run(['curl', '-sS', '--max-time', '10', url],\n"
      "                                            capture_output=True, text=True).stdout)]:\n"
      "        try:\n"
      "            print(name, host, get())\n"
      "        except Exception as e:\n"
      "            print(name, host, 'failed:', e)\n";
  const RunResult r = backend.run(request, {}, nullptr);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  for (const char* host : {"127.0.0.1", "localhost", "api.test"}) {
    for (const char* client : {"urllib", "explicit", "curl"}) {
      const std::string line =
          std::string(client) + " " + host + " host saw: GET /" + host + " HTTP/1.1\n";
      EXPECT_NE(r.stdout_data.find(line), std::string::npos) << line << r.stdout_data;
    }
  }
  ASSERT_TRUE(r.network.has_value());
  EXPECT_EQ(r.network->connections.size(), 9U);
  for (const NetConnection& c : r.network->connections) EXPECT_TRUE(c.allowed) << c.why;
}

// Without a list there is no proxy and no way out, whatever the code tries.
TEST(NamespaceNetwork, WithoutAListThereIsNoProxy) {
  ns::NamespaceBackend backend;
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  RunRequest request;
  request.language = Language::kPython;
  request.code =
      "import os, socket\n"
      "print('proxy', os.environ.get('HTTP_PROXY'))\n"
      "try:\n"
      "    socket.create_connection(('127.0.0.1', 3128), timeout=3)\n"
      "    print('relay: connected')\n"
      "except OSError:\n"
      "    print('relay: refused')\n";
  const RunResult r = backend.run(request, {}, nullptr);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "proxy None\nrelay: refused\n");
  EXPECT_FALSE(r.network.has_value());
}

// A session opened with an allow-list (issue #41): every call reaches what the list allows
// through the session's one proxy, whose connection limit counts across calls; a kernel
// restarted after a timeout gets the relay again; each call's report is its own
// connections; a call cannot bring another list.
TEST(NamespaceNetwork, ASessionsAllowListHoldsAcrossCallsAndItsLimitCountsOverThem) {
  HostHttpServer server;
  ns::NamespaceBackend backend(with_test_resolver({}));
  if (!backend.probe().available) CORDON_SKIP_OR_FAIL(backend.probe().reason);
  const std::string port = std::to_string(server.port());
  SessionOptions options;
  options.base.language = Language::kPython;
  options.base.timeout = std::chrono::seconds(30);
  options.base.network.allow = {"api.test:" + port, "127.0.0.1"};
  options.base.network.max_connections = 3;
  auto opened = backend.open_session(options);
  ASSERT_TRUE(opened) << opened.error().describe();
  BackendSession& session = **opened;
  auto call = [&](const std::string& code, std::chrono::milliseconds timeout) {
    RunRequest request;
    request.language = Language::kPython;
    request.code = code;
    request.timeout = timeout;
    return session.run(request, {}, nullptr);
  };
  const std::string fetch =
      "import urllib.request\n"
      "def fetch(path):\n"
      "  try:\n"
      "    return urllib.request.urlopen('http://api.test:" +
      port +
      "' + path, timeout=10).read().decode()\n"
      "  except Exception as e:\n"
      "    return 'refused: ' + type(e).__name__\n";
  const RunResult first = call(fetch + "print(fetch('/one'))", std::chrono::seconds(30));
  ASSERT_EQ(first.outcome, Outcome::kOk) << first.error.value_or("") << first.stderr_data;
  EXPECT_EQ(first.stdout_data, "host saw: GET /one HTTP/1.1\n");
  ASSERT_TRUE(first.network.has_value());
  ASSERT_EQ(first.network->connections.size(), 1U);
  EXPECT_TRUE(first.network->connections[0].allowed);
  EXPECT_EQ(first.network->access, options.base.network);

  // A shell call, started by the kernel, has the proxy too; its report is its own.
  RunRequest shell;
  shell.language = Language::kSh;
  shell.code = "curl -s --max-time 10 http://api.test:" + port + "/two; sleep 4324.5 &";
  const RunResult second = session.run(shell, {}, nullptr);
  EXPECT_EQ(second.stdout_data, "host saw: GET /two HTTP/1.1")
      << second.stderr_data << second.error.value_or("") << to_string(second.outcome) << " "
      << second.exit_code;
  ASSERT_TRUE(second.network.has_value());
  EXPECT_EQ(second.network->connections.size(), 1U);

  // The kernel's sweep ended the call's background process and spared the relay.
  const RunResult swept = call(
      "import os\n"
      "def read(p, f):\n"
      "  try:\n"
      "    return open(f'/proc/{p}/{f}','rb').read()\n"
      "  except OSError:\n"
      "    return b''\n"
      "ps = [p for p in os.listdir('/proc') if p.isdigit()]\n"
      "print(sum(b'4324.5' in read(p, 'cmdline') for p in ps),"
      " sum(read(p, 'comm') == b'cordon-relay\\n' for p in ps))",
      std::chrono::seconds(30));
  EXPECT_EQ(swept.stdout_data, "0 1\n") << swept.stderr_data;
  const RunResult slow = call("import time\ntime.sleep(100)", std::chrono::milliseconds(500));
  EXPECT_EQ(slow.outcome, Outcome::kTimedOut);
  EXPECT_TRUE(slow.state_lost);
  // The fresh kernel reaches the proxy through a new relay: the third connection of the list.
  const RunResult third = call(fetch + "print(fetch('/three'))", std::chrono::seconds(30));
  EXPECT_EQ(third.stdout_data, "host saw: GET /three HTTP/1.1\n")
      << third.stderr_data << third.error.value_or("") << to_string(third.outcome) << " "
      << third.exit_code;
  // The fourth is over the session's limit, though it is this call's first.
  const RunResult fourth = call(fetch + "print(fetch('/four'))", std::chrono::seconds(30));
  EXPECT_EQ(fourth.stdout_data.rfind("refused: ", 0), 0U) << fourth.stdout_data;
  ASSERT_TRUE(fourth.network.has_value());
  EXPECT_EQ(fourth.network->limit_reached, std::optional<std::string>("connections"));

  RunRequest other;
  other.language = Language::kPython;
  other.code = "print('ran')";
  other.network.allow = {"other.test:" + port};
  const RunResult refused = session.run(other, {}, nullptr);
  EXPECT_EQ(refused.outcome, Outcome::kSandboxError);
  EXPECT_NE(refused.error.value_or("").find("allow-list the session was opened with"),
            std::string::npos)
      << refused.error.value_or("");
  EXPECT_EQ(refused.stdout_data, "");
}

TEST(NamespaceNetwork, AMalformedEntryIsRefusedBeforeAnythingRuns) {
  ns::NamespaceBackend backend;
  RunRequest request;
  request.code = "echo ran";
  request.network.allow = {"*"};
  const RunResult r = backend.run(request, {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kSandboxError);
  EXPECT_EQ(r.stdout_data, "");
  EXPECT_FALSE(r.error.value_or("").empty());
}

}  // namespace
}  // namespace cordon
