// The container backend (OCI mode, runc) end to end, attacked from outside and judged by
// host-side evidence. Each attack has a positive control where one is meaningful: the same
// probe with the protection in question switched off (a ContainerOptions switch, or the
// subprocess backend) succeeds, so a broken probe cannot read as "blocked".
//
// Needs root and runc: skips with the reason otherwise, unless
// CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), which turns the skip into a failure.
#include "container_backend.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "audit/host_probes.h"
#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/plugin_registry.h"
#include "figures_test_support.h"
#include "kernel_features.h"
#include "proc_test_support.h"
#include "process_limit_rule.h"
#include "request_limits_support.h"
#include "sandbox_fs_checks.h"
#include "test_paths.h"

extern char** environ;

namespace cordon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

using audit::host_processes_with;  // the audit's host-side instruments

RunRequest sh(std::string code, milliseconds timeout = seconds(10)) {
  RunRequest r;
  r.code = std::move(code);
  r.timeout = timeout;
  return r;
}

RunRequest py(std::string code, milliseconds timeout = seconds(10)) {
  RunRequest r = sh(std::move(code), timeout);
  r.language = Language::kPython;
  return r;
}

// Python that connects to the host's 127.0.0.1:port: "connected" or "refused <errno>".
std::string tcp_probe(int port) {
  return "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', " +
         std::to_string(port) +
         "))\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n";
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename());
  return out;
}

// Bundles of containers: the bundles dir without the instances' shared root directories.
std::set<std::string> bundles(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : entries(dir / "bundles")) {
    // An instance's own: its shared root and its copy of the init.
    if (!e.ends_with("-rootfs") && !e.ends_with("-init")) out.insert(e);
  }
  return out;
}

class ContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A private runtime dir per test process: the leftover checks below compare it.
    ::setenv("CORDON_RUNTIME_DIR", runtime_.path.c_str(), 1);
    backend_ = std::make_unique<oci::ContainerBackend>();
    if (!backend_->probe().available) CORDON_SKIP_OR_FAIL(backend_->probe().reason);
  }
  void TearDown() override {
    backend_.reset();
    ::unsetenv("CORDON_RUNTIME_DIR");
  }
  RunResult run(const RunRequest& req, const CancelToken& cancel = {}) {
    RunResult r = backend_->run(req, cancel, nullptr);
    EXPECT_EQ(r.backend.name, "container");
    return r;
  }
  static RunResult run_unisolated(const RunRequest& req) {
    PluginRegistry registry;
    registry.discover({testing::plugin_dir()});
    auto b = registry.create("subprocess");
    EXPECT_TRUE(b.has_value());
    return b ? (*b)->run(req, {}, nullptr) : RunResult{};
  }
  // A backend with one protection switched off, for positive controls.
  static RunResult run_with(const oci::ContainerOptions& options, const RunRequest& req) {
    oci::ContainerBackend b(options);
    EXPECT_TRUE(b.probe().available) << b.probe().reason;
    return b.run(req, {}, nullptr);
  }

  testing::ScratchDir runtime_;
  std::unique_ptr<oci::ContainerBackend> backend_;
};

// ---- it runs, and behaves like the other backends ----

TEST_F(ContainerTest, ShBashPythonRunWithThePolicy) {
  RunResult r = run(sh("echo hello"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hello\n");
  RunRequest b = sh("echo ${BASH_VERSION:+bash}");
  b.language = Language::kBash;
  EXPECT_EQ(run(b).stdout_data, "bash\n");
  r = run(py("print(1+1)"));
  EXPECT_EQ(r.stdout_data, "2\n") << r.stderr_data << r.error.value_or("");
  ASSERT_TRUE(r.policy.has_value());
  EXPECT_EQ(r.policy->name, "cordon-default");
}

TEST_F(ContainerTest, ExitCodeSignalTimeoutCancel) {
  RunResult r = run(sh("exit 7"));
  EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("");
  EXPECT_EQ(r.exit_code, 7);
  r = run(sh("kill -SEGV $$"));
  EXPECT_EQ(r.outcome, Outcome::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  auto start = Clock::now();
  r = run(sh("echo before; sleep 5", milliseconds(300)));
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(3)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "before\n");
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(300));
    source.cancel();
  });
  start = Clock::now();
  r = run(sh("sleep 30", seconds(20)), source.token());
  canceller.join();
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(4)));
  EXPECT_EQ(r.outcome, Outcome::kCancelled) << r.error.value_or("");
}

// The init reaps and measures the code; killed with the container at the deadline, it
// measures nothing: the peak RSS is unmeasured, CPU time and memory peak come from the
// container's groups. The signal is cordon's SIGKILL.
TEST_F(ContainerTest, TimedOutRunHasCordonsSignalAndOnlyMeasuredFigures) {
  const RunResult r = run(sh(cordon_test::kSpinSh, seconds(1)));
  ASSERT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  cordon_test::expect_stopped_by_cordon(r);
  EXPECT_FALSE(r.max_rss_kb.has_value());
  EXPECT_TRUE(r.memory_peak_kb.has_value());
}

TEST_F(ContainerTest, MemoryFiguresOfAFiftyMibRun) {
  cordon_test::expect_memory_figures_of_fifty_mib(run(py(cordon_test::kFiftyMibPython)));
}

// The live graphs' source: a one-second loop growing to 50 MiB is sampled from the
// parent groups cordon owns, with rising memory and CPU time that only grows.
TEST_F(ContainerTest, MemoryAndCpuAreSampledWhileTheCodeRuns) {
  struct Samples final : RunObserver {
    void on_sample(const ResourceSample& sample) override { all.push_back(sample); }
    std::vector<ResourceSample> all;
  } samples;
  const RunResult r = backend_->run(
      py("import time\nchunks = []\nfor _ in range(10):\n"
         "    chunks.append(b'x' * (5 << 20))\n    time.sleep(0.1)\nprint('held', len(chunks))",
         seconds(20)),
      {}, &samples);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "held 10\n");
  std::vector<std::uint64_t> memory;
  std::vector<std::uint64_t> cpu;
  for (const ResourceSample& s : samples.all) {
    if (s.memory_bytes) memory.push_back(*s.memory_bytes);
    if (s.cpu_usec) cpu.push_back(*s.cpu_usec);
  }
  ASSERT_GE(memory.size(), 3u) << samples.all.size() << " samples";
  std::string seen;
  for (const std::uint64_t m : memory) seen += std::to_string(m >> 20) + " MiB, ";
  // The highest, not the last: a last sample may catch Python freeing at exit.
  EXPECT_GT(std::ranges::max(memory), memory.front() + (20u << 20)) << "samples: " << seen;
  ASSERT_GE(cpu.size(), 3u);
  EXPECT_TRUE(std::ranges::is_sorted(cpu));
  EXPECT_GT(cpu.back(), 0u);
}

TEST_F(ContainerTest, StdinInputFilesArtifactsAndLongCode) {
  RunRequest req = sh("cat; cat data/in.txt > out.txt; echo more >> out.txt; ln -s /etc/passwd l");
  req.stdin_data = "from stdin\n";
  req.input_files = {{"data/in.txt", "abc\n"}};
  req.artifact_globs = {"out*", "l"};
  RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "from stdin\n");
  ASSERT_EQ(r.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts[0].content, "abc\nmore\n");
  // Code longer than one argv string travels as a read-only file.
  r = run(sh(std::string(200 * 1024, '#') + "\necho long"));
  EXPECT_EQ(r.stdout_data, "long\n") << r.stderr_data << r.error.value_or("");
}

// One code size limit for every backend: code that size runs (as a file: it is too long
// for argv), one byte more is refused before anything starts.
TEST_F(ContainerTest, CodeOfTheMaximumSizeRunsAndOneByteMoreIsRefused) {
  testing::expect_code_size_limit([this](const RunRequest& req) { return run(req); });
}

// Limits outside what the backend declares it can honour are refused before anything
// starts (they reached the kernel or runtime and failed there, or were dropped); both
// ends of each declared range really run.
TEST_F(ContainerTest, LimitsHoldTheDeclaredRangesAtBothEnds) {
  testing::expect_declared_ranges_hold(*backend_,
                                       [this](const RunRequest& req) { return run(req); });
}

TEST_F(ContainerTest, OutputIsCapped) {
  RunRequest req = sh("head -c 300000 /dev/zero");
  req.limits.output_bytes = 1000;
  const RunResult r = run(req);
  EXPECT_EQ(r.stdout_data.size(), 1000u);
  EXPECT_TRUE(r.stdout_truncated);
}

// ---- privileges ----

TEST_F(ContainerTest, NoCapabilitiesNoNewPrivsSeccompUid65534) {
  const RunResult r = run(sh(
      "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status; id -u; id -g; "
      "for f in $(seq 3 1023); do [ -e /proc/$$/fd/$f ] && echo open $f; done; echo end"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data,
            "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
            "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
            "65534\n65534\nend\n");
  // Control: with the runtime's default capability set the same probe shows them.
  oci::ContainerOptions keep;
  keep.drop_capabilities = false;
  const RunResult c = run_with(keep, sh("grep CapBnd /proc/self/status"));
  EXPECT_NE(c.stdout_data, "CapBnd:\t0000000000000000\n") << c.stderr_data << c.error.value_or("");
  EXPECT_NE(c.stdout_data.find("CapBnd"), std::string::npos);
}

constexpr const char* kSyscallProbe = R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    r = getattr(libc, name)(*args)
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
os.mkdir("/tmp/m")
print("mount", call("mount", b"none", b"/tmp/m", b"tmpfs", 0, None))
print("keyctl", call("syscall", 250, 0, ctypes.c_long(-3), 1))
print("ptrace", call("ptrace", 0, 0, 0, 0))
print("unshare", call("unshare", 0x10000000))
)";

TEST_F(ContainerTest, DeniedSyscallsFailWithEperm) {
  const RunResult prod = run(py(kSyscallProbe));
  EXPECT_EQ(prod.stdout_data,
            "mount Operation not permitted\nkeyctl Operation not permitted\n"
            "ptrace Operation not permitted\nunshare Operation not permitted\n")
      << prod.stderr_data << prod.error.value_or("");
  // Control: without the filter (capabilities still dropped) keyctl and ptrace(TRACEME)
  // succeed, so their EPERM above is the filter's.
  oci::ContainerOptions open;
  open.seccomp = false;
  const RunResult c = run_with(open, py(kSyscallProbe));
  EXPECT_NE(c.stdout_data.find("keyctl ok\nptrace ok\n"), std::string::npos)
      << c.stdout_data << c.stderr_data << c.error.value_or("");
}

// ---- network ----

TEST_F(ContainerTest, HostLoopbackListenerReceivesNothing) {
  auto l = audit::Listener::tcp_loopback();
  ASSERT_TRUE(l.has_value()) << l.error().describe();
  const RunResult r = run(py(tcp_probe(l->port())));
  EXPECT_EQ(r.stdout_data.rfind("refused", 0), 0u) << r.stdout_data << r.stderr_data;
  EXPECT_FALSE(l->reached());
  // Control: this backend with only the network namespace switched off.
  oci::ContainerOptions hostnet;
  hostnet.network_namespace = false;
  const RunResult c = run_with(hostnet, py(tcp_probe(l->port())));
  EXPECT_EQ(c.stdout_data, "connected\n") << c.stderr_data << c.error.value_or("");
  EXPECT_TRUE(l->reached());
}

TEST_F(ContainerTest, NoRouteOutButLoopbackWorksInside) {
  // UDP connect() sends nothing; it only picks a route. TEST-NET-1, never a real host.
  const std::string probe =
      "import socket, errno\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n"
      "    s.connect(('192.0.2.1', 53)); print('route')\nexcept OSError as e:\n"
      "    print(errno.errorcode[e.errno])\n"
      "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
      "c = socket.create_connection(srv.getsockname()); print('lo ok')\n";
  const RunResult r = run(py(probe));
  EXPECT_EQ(r.stdout_data, "ENETUNREACH\nlo ok\n") << r.stderr_data;
}

// ---- environment and files ----

TEST_F(ContainerTest, CallersSecretIsNowhereInTheContainer) {
  const std::string secret = "cordon-secret-" + std::to_string(::getpid());
  ::setenv("CORDON_OCI_TEST_SECRET", secret.c_str(), 1);
  const std::string env_entry = "CORDON_OCI_TEST_SECRET=" + secret;
  char* child_env[] = {const_cast<char*>(env_entry.c_str()), nullptr};
  char* child_argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("20.5"), nullptr};
  pid_t holder = 0;
  ASSERT_EQ(::posix_spawn(&holder, "/bin/sleep", nullptr, nullptr, child_argv, child_env), 0);
  const std::string probe = "env; cat /proc/*/environ 2>/dev/null; cat /proc/" +
                            std::to_string(holder) + "/environ 2>/dev/null; true";
  const RunResult r = run(sh(probe));
  const RunResult c = run_unisolated(sh(probe));
  ::unsetenv("CORDON_OCI_TEST_SECRET");
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data.find(secret), std::string::npos) << r.stdout_data;
  EXPECT_NE(c.stdout_data.find(secret), std::string::npos);
}

TEST_F(ContainerTest, HomeCanaryIsNeitherReadableNorDeletable) {
  const char* home = std::getenv("HOME");
  std::string path = std::string(home != nullptr ? home : "/root") + "/cordon-canary-XXXXXX";
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "canary\n", 7), 7);
  ::close(fd);
  ::chmod(path.c_str(), 0644);  // readable by anyone on the host: only isolation hides it
  const RunResult r = run(sh("cat '" + path + "'; rm -f '" + path + "'; echo done"));
  EXPECT_EQ(r.stdout_data, "done\n") << r.stderr_data;
  EXPECT_EQ(testing::read_file(path).value_or(""), "canary\n");
  const RunResult c = run_unisolated(sh("cat '" + path + "'"));
  EXPECT_EQ(c.stdout_data, "canary\n");
  ::unlink(path.c_str());
}

TEST_F(ContainerTest, WritesOutsideTmpDoNotLand) {
  const std::string tag = "cordon-oci-write-" + std::to_string(::getpid());
  const RunResult r = run(sh("for d in / /usr /etc /var /dev; do echo x > $d/" + tag +
                             " 2>/dev/null && echo wrote $d; done; echo x > /tmp/" + tag +
                             " && echo wrote tmp; ls -A /usr/local | wc -l"));
  EXPECT_EQ(r.stdout_data, "wrote tmp\n0\n") << r.stderr_data << r.error.value_or("");
  for (const char* d : {"/", "/usr/", "/etc/", "/var/", "/tmp/"}) {
    EXPECT_FALSE(fs::exists(std::string(d) + tag)) << d;
  }
}

// Debian's awk, which, editor, ... are symlinks through /etc/alternatives (issue #11,
// item 14): every one the host resolves resolves inside.
TEST_F(ContainerTest, AlternativesResolveSoAwkAndWhichRun) {
  testing::expect_alternatives_resolve([this](const RunRequest& req) { return run(req); });
}

// A host submount under a path bound read-only (issue #11, item 17). The runtime binds
// non-recursively ("bind", not "rbind"; no user namespace requires more), so the submount
// is not in the container at all and the write meets the read-only /usr. Either way it
// must not land. The submount lives in a private mount namespace of one test thread.
TEST_F(ContainerTest, AWritableHostSubmountUnderABoundPathTakesNoWrite) {
  const std::string dir = testing::usr_submount_dir();
  RunResult inside;
  bool landed = false;
  const std::string error = testing::with_writable_submount(dir, [&] {
    oci::ContainerBackend backend;  // its runtime starts in this thread's mount namespace
    inside = backend.run(sh(testing::submount_write_probe(dir)), {}, nullptr);
    landed = fs::exists(dir + "/probe");
  });
  ASSERT_EQ(error, "");
  EXPECT_EQ(inside.outcome, Outcome::kOk) << inside.error.value_or("") << inside.stderr_data;
  EXPECT_EQ(inside.stdout_data, "refused\n") << inside.stderr_data;
  EXPECT_FALSE(landed);
}

// ---- resources ----

TEST_F(ContainerTest, CpuSpinTimesOutPromptly) {
  const auto start = Clock::now();
  const RunResult r = run(sh("while :; do :; done", seconds(1)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(3)));
}

// The code still printing at the deadline: the pipes are full and nobody reads them any
// more. It is a timeout all the same, promptly (a runtime relaying the stdio used to
// block on them until the teardown bound, and the run became a sandbox error).
TEST_F(ContainerTest, TimeoutWhilePrintingIsATimeoutPromptly) {
  for (const RunRequest& req :
       {sh("yes", seconds(1)), py("while True:\n    print('x')\n", seconds(1))}) {
    const auto start = Clock::now();
    const RunResult r = run(req);
    EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
    EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(5)));
    EXPECT_FALSE(r.stdout_data.empty());
  }
}

// The same fork failure reads the same on every backend (process_limit_rule.h).
TEST_F(ContainerTest, AFailureAfterARefusedForkIsTheProcessLimit) {
  testing::expect_one_process_limit_rule([&](const RunRequest& r) { return run(r); });
}

TEST_F(ContainerTest, MemoryHogIsOomKilledAndReportedSo) {
  // 2 GiB in 16 MiB pieces, each written as it is made: the memory limit is what stops it,
  // not the kernel's overcommit check refusing one huge allocation (a MemoryError on a host
  // with little RAM, as the guest of tests/guest has).
  RunRequest req = py("b = [bytearray(16 << 20) for _ in range(128)]\nprint('allocated')");
  req.limits.memory_bytes = 128u << 20;
  const RunResult r = run(req);
  EXPECT_EQ(r.stdout_data, "");
  EXPECT_TRUE(r.oom_killed) << to_string(r.outcome) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.outcome, Outcome::kLimitExceeded);
  EXPECT_EQ(r.limit, LimitKind::kMemory);
  // Control: the same allocation under a higher ceiling succeeds (the probe can allocate).
  RunRequest ok = py("b = bytearray(64 << 20)\nprint('allocated')");
  ok.limits.memory_bytes = 512u << 20;
  const RunResult c = run(ok);
  EXPECT_EQ(c.stdout_data, "allocated\n") << c.stderr_data << c.error.value_or("");
  EXPECT_FALSE(c.oom_killed);
}

TEST_F(ContainerTest, BigWriteIntoTmpFailsWithEnospcAndHostDiskIsUntouched) {
  struct statvfs before{}, after{};
  ::statvfs("/", &before);
  RunRequest req = sh("dd if=/dev/zero of=/tmp/big bs=1M count=1024 2>&1 | head -1; echo done");
  req.limits.scratch_bytes = 32u << 20;
  const RunResult r = run(req);
  ::statvfs("/", &after);
  EXPECT_NE(r.stdout_data.find("No space left on device"), std::string::npos) << r.stdout_data;
  const auto free_before = before.f_bavail * before.f_frsize;
  const auto free_after = after.f_bavail * after.f_frsize;
  EXPECT_LT(free_before > free_after ? free_before - free_after : 0, 32u << 20);
}

TEST_F(ContainerTest, ForkBombEndsAtThePidsLimitAndTheHostStaysResponsive) {
  RunRequest req;
  req.language = Language::kBash;
  req.code = "ocibomb() { ocibomb | ocibomb & }; ocibomb; sleep 2";
  req.timeout = seconds(4);
  req.limits.max_processes = 32;
  std::atomic<bool> done{false};
  std::atomic<long> worst_ms{0};
  std::thread prober([&] {
    std::this_thread::sleep_for(milliseconds(300));
    while (!done) {
      const auto t0 = Clock::now();
      pid_t pid = 0;
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) == 0) {
        ::waitpid(pid, nullptr, 0);
      }
      const long ms = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
      worst_ms = std::max<long>(worst_ms, ms);
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  const auto start = Clock::now();
  const RunResult r = run(req);
  done = true;
  prober.join();
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(7)));
  EXPECT_LT(worst_ms.load(), 1000);
  EXPECT_NE(r.outcome, Outcome::kSandboxError) << r.error.value_or("");
  EXPECT_TRUE(host_processes_with("ocibomb").empty());
}

// ---- process tree and leftovers ----

TEST_F(ContainerTest, SetsidDescendantsAreGoneAfterExitAndTimeout) {
  for (const bool timeout : {false, true}) {
    const std::string mark = timeout ? "41.337" : "41.338";
    const RunResult r =
        run(sh("setsid sleep " + mark + " & nohup sleep " + mark +
                   " >/dev/null 2>&1 & sleep 0.2; " + (timeout ? "sleep 30" : "exit 0"),
               milliseconds(timeout ? 800 : 10000)));
    EXPECT_EQ(r.outcome, timeout ? Outcome::kTimedOut : Outcome::kOk) << r.error.value_or("");
    EXPECT_TRUE(host_processes_with(mark).empty()) << mark;
  }
}

// Cgroups of our runtime dir's containers (cordon-oci-*) under our own cgroups.
std::set<std::string> container_cgroups() {
  std::set<std::string> out;
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    const std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1);
    if (ctrl.starts_with("name=")) continue;
    const std::string root = ctrl.empty() ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup/" + ctrl;
    for (const auto& e : entries(root + line.substr(c2 + 1))) {
      if (e.starts_with(std::string("cordon-oci-") + std::to_string(::getpid()))) {
        out.insert(ctrl + ":" + e);
      }
    }
  }
  return out;
}

std::set<std::string> mounts_under(const fs::path& dir) {
  std::set<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.find(dir.string()) != std::string::npos) out.insert(line);
  }
  return out;
}

TEST_F(ContainerTest, NothingLeftAfterEveryOutcome) {
  RunRequest limited = sh("echo x > /tmp/f; sleep 0.1");
  limited.limits.memory_bytes = 64u << 20;
  (void)run(limited);
  (void)run(sh("sleep 5", milliseconds(200)));
  (void)run(sh("setsid sleep 42.5 & exit 3"));
  RunRequest oom = py("b = bytearray(1 << 30)");
  oom.limits.memory_bytes = 64u << 20;
  (void)run(oom);
  const fs::path dir = fs::path(runtime_.path) / "oci";
  EXPECT_TRUE(bundles(dir).empty());
  EXPECT_TRUE(entries(dir / "state").empty());
  EXPECT_TRUE(mounts_under(dir).empty());
  EXPECT_TRUE(container_cgroups().empty());
  EXPECT_TRUE(host_processes_with("42.5").empty());
}

TEST_F(ContainerTest, KilledCordonsContainerEndsByItselfAndIsSweptAtTheNextStart) {
  pid_t cli = 0;
  const std::string code = "sleep 43.25";
  const char* cli_binary = testing::cli_binary();
  char* argv[] = {
      const_cast<char*>(cli_binary),  const_cast<char*>("run"),        const_cast<char*>("-b"),
      const_cast<char*>("container"), const_cast<char*>("-t"),         const_cast<char*>("20s"),
      const_cast<char*>("-c"),        const_cast<char*>(code.c_str()), nullptr};
  ASSERT_EQ(::posix_spawn(&cli, cli_binary, nullptr, nullptr, argv, environ), 0);
  const fs::path dir = fs::path(runtime_.path) / "oci";
  auto until = Clock::now() + seconds(10);
  auto sleeping = [] {
    std::vector<pid_t> out;
    for (pid_t p : host_processes_with("43.25")) {
      if (testing::read_file("/proc/" + std::to_string(p) + "/cmdline")
              .value_or("")
              .starts_with("sleep")) {
        out.push_back(p);
      }
    }
    return out;
  };
  while (sleeping().empty() && Clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_FALSE(sleeping().empty()) << "the CLI's container never started";
  ::kill(cli, SIGKILL);
  ::waitpid(cli, nullptr, 0);
  // The init reads EOF on its control socket and takes the container down.
  until = Clock::now() + seconds(5);
  while (!sleeping().empty() && Clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_TRUE(sleeping().empty()) << "the container outlived the killed cordon";
  EXPECT_FALSE(bundles(dir).empty()) << "a killed cordon leaves its bundle";
  // The next instance sweeps the dead one's container, cgroups, mount, bundle and shared
  // root, and leaves a live instance's alone (this test's: its shared root stays).
  {
    oci::ContainerBackend sweeper;
  }
  EXPECT_TRUE(bundles(dir).empty());
  EXPECT_EQ(entries(dir / "bundles").size(), 2u) << "only this test's shared root and init";
  EXPECT_TRUE(entries(dir / "state").empty());
  EXPECT_TRUE(mounts_under(dir).empty());
  EXPECT_EQ(entries(dir / "locks").size(), 1u) << "only this test's live instance";
}

TEST_F(ContainerTest, LiveInstancesContainersAreNotSwept) {
  std::thread t([&] { (void)run(sh("sleep 1.5")); });
  const fs::path dir = fs::path(runtime_.path) / "oci";
  const auto until = Clock::now() + seconds(5);
  while (bundles(dir).empty() && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  const auto during = entries(dir / "bundles");
  EXPECT_FALSE(bundles(dir).empty());
  {
    oci::ContainerBackend other;  // sweeps at start; its own shared root goes with it
  }
  EXPECT_EQ(entries(dir / "bundles"), during);
  t.join();
}

// ---- the warm pool ----

TEST_F(ContainerTest, PooledRunsServeOneRunEachAndAreDestroyed) {
  oci::ContainerOptions o;
  o.pool_size = 2;
  oci::ContainerBackend pooled(o);
  ASSERT_TRUE(pooled.probe().available);
  ASSERT_NE(pooled.pool(), nullptr);
  ASSERT_TRUE(pooled.pool()->wait_ready(Clock::now() + seconds(10))) << pooled.pool()->last_error();
  std::set<std::string> hostnames;
  for (int i = 0; i < 4; ++i) {
    RunRequest req = sh("ls /tmp; echo x > /tmp/state; cat /proc/1/cmdline | tr '\\0' ' '; echo");
    req.stdin_data = "";
    const RunResult r = pooled.run(req, {}, nullptr);
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
    // Nothing of the previous run: /tmp starts empty every time.
    EXPECT_EQ(r.stdout_data, "/.cordon-init \n") << r.stdout_data;
  }
  // A timeout and a request with other limits (served cold) through the same instance.
  RunResult r = pooled.run(sh("sleep 5", milliseconds(300)), {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  RunRequest other = sh("echo cold");
  other.limits.memory_bytes = 100u << 20;
  r = pooled.run(other, {}, nullptr);
  EXPECT_EQ(r.stdout_data, "cold\n") << r.error.value_or("");
}

// A pooled container's init ends every orphan of the code before it reports, as the
// namespace backend's does: nothing of the code runs while the figures are read and the
// artifacts collected (an orphan writing late would land in both). The report says so,
// and cordon refuses one that does not: with an init that reports first (the order
// before #11 item 18) this run is a sandbox error.
TEST_F(ContainerTest, PooledRunsEndOrphansBeforeTheResultIsRead) {
  oci::ContainerOptions o;
  o.pool_size = 1;
  oci::ContainerBackend pooled(o);
  ASSERT_TRUE(pooled.probe().available);
  ASSERT_TRUE(pooled.pool()->wait_ready(Clock::now() + seconds(10))) << pooled.pool()->last_error();
  RunRequest req = sh("(sleep 0.3; echo late > late.txt; echo LATE) & echo early");
  req.artifact_globs = {"late.txt"};
  const RunResult r = pooled.run(req, {}, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "early\n");
  EXPECT_TRUE(r.artifacts.empty());
}

TEST(ContainerProbe, CrunIsRefusedOnAHybridHostWithTheReason) {
  const oci::RuntimeProbe p = oci::probe_runtime("crun");
  if (!p.path.empty() && ::geteuid() == 0 && oci::cgroup_hybrid_host()) {
    EXPECT_FALSE(p.usable);
    EXPECT_NE(p.reason.find("hybrid"), std::string::npos) << p.reason;
  }
  EXPECT_FALSE(oci::probe_runtime("docker").usable);
  EXPECT_NE(oci::probe_runtime("nonesuch-runtime").reason.find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace cordon
