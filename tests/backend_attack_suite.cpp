// The attacks every isolating backend must withstand (backend_attack_suite.h says how the
// suite is run and over which backends). Linked into each isolating backend's test binary,
// which instantiates it with its own AttackTarget.
#include "backend_attack_suite.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audit/host_probes.h"
#include "cordon/interpreter.h"
#include "cordon/observer.h"
#include "cordon/plugin_registry.h"
#include "figures_test_support.h"
#include "kernel_features.h"
#include "loopback_server.h"
#include "proc_test_support.h"
#include "process_limit_rule.h"
#include "request_limits_support.h"
#include "sandbox_fs_checks.h"
#include "test_paths.h"

extern char** environ;

namespace cordon::testing {

void BackendAttack::SetUp() {
  target_ = GetParam().make();
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (const auto& [name, why] : facts().pending) {
    if (test.starts_with(name + "/")) GTEST_SKIP() << "pending for this target: " << why;
  }
  const auto& lean = facts().lean;
  if (!lean.empty() && !cordon_test::full_tier() &&
      std::ranges::none_of(lean,
                           [&](const std::string& name) { return test.starts_with(name + "/"); })) {
    GTEST_SKIP() << "full tier only for this target (CORDON_TEST_FULL=1)";
  }
  const Probe probe = target_->set_up();
  if (!probe.available) CORDON_SKIP_OR_FAIL(probe.reason);
}

void BackendAttack::TearDown() {
  if (target_) target_->tear_down();
}

RunResult BackendAttack::run(const RunRequest& request, const CancelToken& cancel) {
  RunResult r = target_->run(request, cancel);
  EXPECT_EQ(r.backend.name, facts().name);
  return r;
}

RunResult BackendAttack::run_weakened(const Weakening& weakening, const RunRequest& request) {
  const std::unique_ptr<Backend> weak = target_->make(weakening);
  EXPECT_TRUE(weak->probe().available) << weak->probe().reason;
  return weak->run(request, {}, nullptr);
}

RunResult BackendAttack::run_unisolated(const RunRequest& request) {
  PluginRegistry registry;
  registry.discover({plugin_dir()});
  auto b = registry.create("subprocess");
  EXPECT_TRUE(b.has_value());
  return b ? (*b)->run(request, {}, nullptr) : RunResult{};
}

// Whether this backend's memory limit for `req` is RLIMIT_AS per process.
bool BackendAttack::rlimit_as_memory(const RunRequest& req) const {
  const Capabilities caps = target_->backend().capabilities(req.limits);
  const Capability* memory = caps.find(Aspect::kMemory);
  return memory != nullptr && memory->mechanism.find("RLIMIT_AS") != std::string::npos;
}

namespace {

namespace fs = std::filesystem;
using audit::host_processes_with;  // the audit's host-side instruments
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Whether the run's memory limit was a cgroup's, which also measures the sandbox's peak.
bool had_memory_group(const RunResult& r) {
  return std::ranges::any_of(r.enforced, [](const Enforced& e) {
    return e.aspect == Aspect::kMemory && e.mechanism.find("cgroup") != std::string::npos;
  });
}

// ---- it runs, and behaves like the other backends ----

TEST_P(BackendAttack, ShBashPythonRunWithThePolicy) {
  RunResult r = run(sh("echo hello"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hello\n");
  RunRequest b = sh("echo ${BASH_VERSION:+bash}");
  b.language = Language::kBash;
  r = run(b);
  EXPECT_EQ(r.stdout_data, "bash\n") << r.stderr_data << r.error.value_or("");
  r = run(py("print(1+1)"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "2\n");
  ASSERT_TRUE(r.policy.has_value());
  EXPECT_EQ(r.policy->name, "cordon-default");
}

// JavaScript (node) and Perl, the interpreter table's other languages, under the sandbox's
// syscall filter and a memory limit: V8 reserves large address ranges, so node must run
// under the cgroup limit (never an RLIMIT_AS fallback), and a node program that allocates
// past it is stopped by it. Code too long for argv goes through the file, as for the others.
// CI installs both (node for the MCP SDK test; perl is in every Debian).
TEST_P(BackendAttack, JavaScriptAndPerlRunUnderThePolicyAndTheMemoryLimit) {
  struct Case {
    Language language;
    std::string code;
    std::string long_code;
  };
  const std::string pad(200 * 1024, 'x');
  const Case cases[] = {
      {Language::kJavaScript, "console.log(6 * 7)", "// " + pad + "\nconsole.log(6 * 7)\n"},
      {Language::kPerl, "print 6 * 7, \"\\n\";", "# " + pad + "\nprint 6 * 7, \"\\n\";\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.language)));
    if (!find_interpreter(c.language)) {
      if (::cordon_test::require_kernel_features()) {
        ADD_FAILURE() << interpreter_name(c.language) << " is not installed";
      }
      continue;
    }
    RunRequest req = sh(c.code, seconds(20));
    req.language = c.language;
    req.limits.memory_bytes = 128U << 20;
    // Where the memory limit is RLIMIT_AS per process (the namespace backend run by an
    // ordinary user without a cgroup of its own), node is refused, never run unbounded.
    if (c.language == Language::kJavaScript && rlimit_as_memory(req)) {
      const RunResult refused = run(req);
      EXPECT_EQ(refused.outcome, Outcome::kSandboxError);
      EXPECT_NE(refused.error.value_or("").find("javascript cannot run under the"),
                std::string::npos)
          << refused.error.value_or("");
      EXPECT_EQ(refused.stdout_data, "");
      continue;
    }
    RunResult r = run(req);
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
    EXPECT_EQ(r.stdout_data, "42\n") << r.stderr_data;
    ASSERT_TRUE(r.policy.has_value());
    req.code = c.long_code;
    r = run(req);
    EXPECT_EQ(r.stdout_data, "42\n") << r.stderr_data << r.error.value_or("");
  }
  RunRequest hog = sh("const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));", seconds(30));
  hog.language = Language::kJavaScript;
  hog.limits.memory_bytes = 128U << 20;
  if (!find_interpreter(Language::kJavaScript) || rlimit_as_memory(hog)) return;
  const RunResult r = run(hog);
  EXPECT_EQ(r.outcome, Outcome::kLimitExceeded) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.limit, LimitKind::kMemory);
}

// The request checks every backend passes alike (request_limits_support.h says what they
// check), here through the sandbox: the code size limit, and the declared limit ranges.
TEST_P(BackendAttack, CodeOfTheMaximumSizeRunsAndOneByteMoreIsRefused) {
  expect_code_size_limit([this](const RunRequest& req) { return run(req); });
}

TEST_P(BackendAttack, LimitsHoldTheDeclaredRangesAtBothEnds) {
  expect_declared_ranges_hold(backend(), [this](const RunRequest& req) { return run(req); });
}

TEST_P(BackendAttack, ExitCodeSignalTimeoutCancel) {
  RunResult r = run(sh("exit 7"));
  EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("");
  EXPECT_EQ(r.exit_code, 7);
  r = run(sh("kill -SEGV $$"));
  EXPECT_EQ(r.outcome, Outcome::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  auto start = Clock::now();
  r = run(sh("echo before; sleep 5", milliseconds(300)));
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(2) + facts().stop_slack));
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
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(3) + facts().stop_slack));
  EXPECT_EQ(r.outcome, Outcome::kCancelled) << r.error.value_or("");
}

TEST_P(BackendAttack, StdinInputFilesArtifactsAndLongCode) {
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

// ---- privileges ----

TEST_P(BackendAttack, NoCapabilitiesNoNewPrivsSeccompUid65534OnlyStdFds) {
  const RunResult r = run(sh(
      "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status; id -u; id -g; "
      "for f in $(seq 3 1023); do [ -e /proc/$$/fd/$f ] && echo open $f; done; echo end"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  const std::string caps =
      "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
      "CapBnd:\t0000000000000000\n";
  if (!facts().user_space_kernel) {
    EXPECT_EQ(r.stdout_data, caps +
                                 "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
                                 "65534\n65534\nend\n");
  } else {
    // gVisor's status has no CapAmb and NoNewPrivs lines, and it has no ambient
    // capabilities at all (PR_CAP_AMBIENT is refused): ask prctl for no_new_privs.
    EXPECT_EQ(r.stdout_data, caps + "Seccomp:\t2\n65534\n65534\nend\n");
    const RunResult p = run(py("import ctypes\nprint(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))\n"));
    EXPECT_EQ(p.stdout_data, "1\n") << "PR_GET_NO_NEW_PRIVS " << p.stderr_data;
  }
  // Control: the same probe with capabilities kept shows them (the probe can see caps).
  const std::string set = facts().kept_capability_set;
  const RunResult c =
      run_weakened({.keep_capabilities = true}, sh("grep " + set + " /proc/self/status"));
  EXPECT_NE(c.stdout_data, set + ":\t0000000000000000\n") << c.stderr_data << c.error.value_or("");
  EXPECT_NE(c.stdout_data.find(set), std::string::npos) << c.stderr_data;
}

TEST_P(BackendAttack, DeniedSyscallsFailWithEperm) {
  // The production sandbox: every probe is refused.
  const RunResult prod = run(py(kSyscallProbe));
  EXPECT_EQ(prod.stdout_data, kAllSyscallsDenied) << prod.stderr_data << prod.error.value_or("");
  // Control: without the filter (capabilities still dropped, as in production) keyctl and
  // ptrace(TRACEME) succeed, so their EPERM above is the filter's. bpf stays refused by
  // the kernel either way on this host (kernel.unprivileged_bpf_disabled), so bpf's denial
  // has no positive control here.
  const RunResult plain = run_weakened({.no_seccomp = true}, py(kSyscallProbe));
  EXPECT_NE(
      plain.stdout_data.find(facts().user_space_kernel ? "ptrace ok\n" : "keyctl ok\nptrace ok\n"),
      std::string::npos)
      << plain.stdout_data << plain.stderr_data << plain.error.value_or("");
  // `unshare -Ur` through the production backend.
  const RunResult u = run(sh("unshare -Ur true && echo escaped; echo done"));
  EXPECT_EQ(u.stdout_data, "done\n") << u.stderr_data;
}

// ---- network ----

// Python that connects to the host's 127.0.0.1:port: "connected" or "refused <errno>".
std::string tcp_probe(int port) {
  return "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', " +
         std::to_string(port) +
         "))\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n";
}

TEST_P(BackendAttack, HostLoopbackListenerReceivesNothing) {
  auto l = audit::Listener::tcp_loopback();  // the audit's host-side instrument
  ASSERT_TRUE(l.has_value()) << l.error().describe();
  const RunResult r = run(py(tcp_probe(l->port())));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.stderr_data << r.error.value_or("");
  EXPECT_EQ(r.stdout_data.rfind("refused", 0), 0u) << r.stdout_data << r.stderr_data;
  EXPECT_FALSE(l->reached());
  // Controls: unisolated, and this backend with only the network namespace switched off.
  RunResult c = run_unisolated(py(tcp_probe(l->port())));
  EXPECT_EQ(c.stdout_data, "connected\n") << c.stderr_data;
  EXPECT_TRUE(l->reached());
  c = run_weakened({.host_network = true}, py(tcp_probe(l->port())));
  EXPECT_EQ(c.stdout_data, "connected\n") << c.stderr_data << c.error.value_or("");
  EXPECT_TRUE(l->reached());
}

TEST_P(BackendAttack, HostAbstractUnixSocketReceivesNothing) {
  const std::string name = "cordon-" + facts().name + "-test-" + std::to_string(::getpid());
  auto listener = audit::Listener::abstract_unix(name);
  ASSERT_TRUE(listener.has_value()) << listener.error().describe();
  const std::string probe =
      "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0" + name +
      "')\n    print('connected')\nexcept OSError as e:\n    print('refused')\n";
  const RunResult r = run(py(probe));
  EXPECT_EQ(r.stdout_data, "refused\n") << r.stderr_data << r.error.value_or("");
  EXPECT_FALSE(listener->reached());
  const RunResult c = run_unisolated(py(probe));
  EXPECT_EQ(c.stdout_data, "connected\n") << c.stderr_data;
  EXPECT_TRUE(listener->reached());
}

TEST_P(BackendAttack, NoRouteOutButLoopbackWorksInside) {
  // UDP connect() sends nothing; it only picks a route. TEST-NET-1, never a real host.
  const RunResult r =
      run(py("import socket, errno\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n"
             "    s.connect(('192.0.2.1', 53)); print('route')\nexcept OSError as e:\n"
             "    print(errno.errorcode[e.errno])\n"
             "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
             "c = socket.create_connection(srv.getsockname()); print('lo ok')\n"));
  EXPECT_EQ(r.stdout_data,
            std::string(facts().user_space_kernel ? "EHOSTUNREACH" : "ENETUNREACH") + "\nlo ok\n")
      << r.stderr_data;
}

// ---- the network allow-list (issue #16) ----

// With the host's 127.0.0.2:PORT allowed as an address: the code reaches it through the
// proxy (the variables are set, in both spellings), not directly; another address is refused
// by the proxy; there is no resolver; every attempt is in the result, and the run's enforced
// network names the proxy and the list. Nothing leaves the machine.
TEST_P(BackendAttack, AnAllowListReachesWhatItNamesOnlyThroughTheProxy) {
  const FromHostServer host;
  const std::string target = host.target();
  const std::string other = "127.0.0.3" + target.substr(target.find(':'));
  RunRequest req =
      py("import os, socket, urllib.request, urllib.error\n"
         "print(os.environ.get('HTTP_PROXY'), os.environ.get('https_proxy'))\n"
         "print(urllib.request.urlopen('http://" +
             target +
             "/', timeout=10).read().decode())\n"
             "try:\n"
             "    urllib.request.urlopen('http://" +
             other +
             "/', timeout=10)\n"
             "except urllib.error.HTTPError as e:\n"
             "    print('other', e.code)\n"
             "try:\n"
             "    socket.create_connection(('127.0.0.2', " +
             target.substr(target.find(':') + 1) +
             "), timeout=3)\n"
             "    print('direct: connected')\n"
             "except OSError:\n"
             "    print('direct: refused')\n"
             "try:\n"
             "    socket.getaddrinfo('example.org', 80)\n"
             "    print('dns: resolved')\n"
             "except OSError:\n"
             "    print('dns: none')\n",
         seconds(30));
  req.network.allow = {target};
  const RunResult r = run(req);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data,
            "http://127.0.0.1:3128 http://127.0.0.1:3128\nfrom host\nother 403\ndirect: "
            "refused\ndns: none\n");
  EXPECT_EQ(host.accepted(), 1);
  ASSERT_TRUE(r.network.has_value());
  ASSERT_EQ(r.network->connections.size(), 2U);
  EXPECT_TRUE(r.network->connections[0].allowed) << r.network->connections[0].why;
  EXPECT_GT(r.network->connections[0].bytes_in, 0U);
  EXPECT_FALSE(r.network->connections[1].allowed);
  EXPECT_EQ(r.network->connections[1].host, "127.0.0.3");
  const auto network = std::ranges::find(r.enforced, Aspect::kNetwork, &Enforced::aspect);
  ASSERT_NE(network, r.enforced.end());
  EXPECT_NE(network->mechanism.find("cordon's proxy"), std::string::npos) << network->mechanism;
  EXPECT_EQ(network->value, "allow " + target);

  // Without the list the same sandbox has no proxy and no way out.
  const RunResult closed =
      run(py("import os, socket\nprint(os.environ.get('HTTP_PROXY'))\ntry:\n"
             "    socket.create_connection(('127.0.0.1', 3128), timeout=3)\n    print('relay')\n"
             "except OSError:\n    print('no relay')\n"));
  EXPECT_EQ(closed.stdout_data, "None\nno relay\n") << closed.stderr_data;
  EXPECT_FALSE(closed.network.has_value());
}

// The connection limit by the process limit's rule: code that fails once the proxy refuses
// it past the limit exceeded it (limit_exceeded, network); code that copes succeeds, and the
// report still says the limit was reached.
TEST_P(BackendAttack, FailingPastTheNetworkLimitIsLimitExceeded) {
  const FromHostServer host;
  const auto fetch_twice = [&](int status) {
    RunRequest req =
        py("import sys, urllib.request, urllib.error\n"
           "for i in range(2):\n"
           "    try:\n"
           "        urllib.request.urlopen('http://" +
               host.target() +
               "/', timeout=10).read()\n"
               "        print('fetched', i)\n"
               "    except urllib.error.HTTPError as e:\n"
               "        print('refused', i, e.code)\n"
               "        sys.exit(" +
               std::to_string(status) + ")\n",
           seconds(30));
    req.network.allow = {host.target()};
    req.network.max_connections = 1;
    return req;
  };
  const RunResult failed = run(fetch_twice(3));
  EXPECT_EQ(failed.outcome, Outcome::kLimitExceeded) << failed.stdout_data << failed.stderr_data;
  EXPECT_EQ(failed.limit, LimitKind::kNetwork);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.stdout_data, "fetched 0\nrefused 1 403\n");
  ASSERT_TRUE(failed.network.has_value());
  EXPECT_EQ(failed.network->limit_reached, "connections");

  const RunResult coped = run(fetch_twice(0));
  EXPECT_EQ(coped.outcome, Outcome::kOk) << coped.stdout_data << coped.stderr_data;
  EXPECT_FALSE(coped.limit.has_value());
  ASSERT_TRUE(coped.network.has_value());
  EXPECT_EQ(coped.network->limit_reached, "connections");
  EXPECT_EQ(host.accepted(), 2);
}

// ---- environment and files ----

TEST_P(BackendAttack, CallersSecretIsNowhereInTheSandbox) {
  // Two places a secret lives: this process's environment (setenv: in our memory, which
  // a namespace sandbox's set-up process copies before it execs), and the exec-time
  // environment of a host process (what /proc/<pid>/environ shows).
  const std::string secret = "cordon-secret-" + std::to_string(::getpid());
  ::setenv("CORDON_TEST_SECRET", secret.c_str(), 1);
  const std::string env_entry = "CORDON_TEST_SECRET=" + secret;
  char* child_env[] = {const_cast<char*>(env_entry.c_str()), nullptr};
  char* child_argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("20.5"), nullptr};
  pid_t holder = 0;
  ASSERT_EQ(::posix_spawn(&holder, "/bin/sleep", nullptr, nullptr, child_argv, child_env), 0);
  const std::string probe = "env; cat /proc/*/environ 2>/dev/null; cat /proc/" +
                            std::to_string(holder) + "/environ 2>/dev/null; true";
  const RunResult r = run(sh(probe));
  const RunResult c = run_unisolated(sh(probe));
  ::unsetenv("CORDON_TEST_SECRET");
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data.find(secret), std::string::npos) << r.stdout_data;
  // Control: a plain child can read it from the holder's environ.
  EXPECT_NE(c.stdout_data.find(secret), std::string::npos);
}

TEST_P(BackendAttack, HomeCanaryIsNeitherReadableNorDeletable) {
  const char* home = std::getenv("HOME");
  std::string path = std::string(home != nullptr ? home : "/root") + "/cordon-canary-XXXXXX";
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "canary\n", 7), 7);
  ::close(fd);
  ::chmod(path.c_str(), 0644);  // readable by anyone on the host: only isolation hides it
  const RunResult r = run(sh("cat '" + path + "'; rm -f '" + path + "'; echo done"));
  EXPECT_EQ(r.stdout_data, "done\n") << r.stderr_data;
  EXPECT_EQ(read_file(path).value_or(""), "canary\n");  // still there, unchanged
  const RunResult c = run_unisolated(sh("cat '" + path + "'"));
  EXPECT_EQ(c.stdout_data, "canary\n");
  ::unlink(path.c_str());
}

TEST_P(BackendAttack, WritesOutsideTmpDoNotLandAndUsrLocalIsHidden) {
  const std::string tag = "cordon-" + facts().name + "-write-" + std::to_string(::getpid());
  const RunResult r = run(sh("for d in / /usr /etc /var /dev; do echo x > $d/" + tag +
                             " 2>/dev/null && echo wrote $d; done; echo x > /tmp/" + tag +
                             " && echo wrote tmp; ls -A /usr/local | wc -l"));
  EXPECT_EQ(r.stdout_data, "wrote tmp\n0\n") << r.stderr_data << r.error.value_or("");
  for (const char* d : {"/", "/usr/", "/etc/", "/var/", "/dev/", "/tmp/"}) {
    EXPECT_FALSE(fs::exists(std::string(d) + tag)) << d;
  }
  // Control: the host's /usr/local is not empty on this machine kind.
  EXPECT_FALSE(fs::is_empty("/usr/local"));
}

// Debian's awk, which, editor, ... are symlinks through /etc/alternatives (issue #11,
// item 14): every one the host resolves resolves inside.
TEST_P(BackendAttack, AlternativesResolveSoAwkAndWhichRun) {
  expect_alternatives_resolve([this](const RunRequest& req) { return run(req); });
}

// The command-line tools code reaches for first, on files of its own and on the root
// (issue #40, item 4): under Debian's runsc, coreutils' `ls` and `stat` failed with
// "Invalid argument" (gVisor refuses AT_NO_AUTOMOUNT) while python's os.listdir worked.
// Not an escape: the same script runs on the unisolated subprocess backend, which must
// print the same.
constexpr const char* kOrdinaryTools = R"(set -e
ls -la / >/dev/null && echo ls-root
ls -la . >/dev/null && echo ls-cwd
stat -c %F /
mkdir -p t/d
printf 'b\nc\na\n' >t/d/in
cp t/d/in t/copy
stat -c '%s %F' t/copy
find t -type f | sort
tar -cf t.tar t && tar -tf t.tar | sort
sort t/copy | tr '\n' ' '
echo
)";
constexpr const char* kOrdinaryToolsOut =
    "ls-root\nls-cwd\ndirectory\n6 regular file\nt/copy\nt/d/in\nt/\nt/copy\nt/d/\nt/d/in\n"
    "a b c \n";

TEST_P(BackendAttack, OrdinaryToolsListStatCopyFindTarAndSort) {
  const RunResult control = run_unisolated(sh(kOrdinaryTools));
  ASSERT_EQ(control.stdout_data, kOrdinaryToolsOut) << control.stderr_data;
  const RunResult r = run(sh(kOrdinaryTools));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, kOrdinaryToolsOut);
  EXPECT_EQ(r.stderr_data, "");
}

// A host submount under a path bound read-only takes no write (issue #11, item 17). The
// namespace backend binds such a tree recursively (a user namespace must: a remount
// changes only the top), so the submount is visible and read-only; runc binds
// non-recursively ("bind", not "rbind"), so it is absent and the write meets the
// read-only /usr. The submount lives in a private mount namespace of one test thread
// (sandbox_fs_checks.h).
TEST_P(BackendAttack, AWritableHostSubmountUnderABoundPathTakesNoWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting the test's submount needs root";
  const std::string dir = usr_submount_dir();
  RunResult inside;
  RunResult control;
  bool landed = false;
  std::string unavailable;
  const std::string error = with_writable_submount(dir, [&] {
    // Made here, so its sandboxes start in this thread's mount namespace (a warm pool's
    // thread would not see the submount).
    const std::unique_ptr<Backend> backend = target_->make({});
    if (!backend->probe().available) {
      unavailable = backend->probe().reason;
      return;
    }
    inside = backend->run(sh(submount_write_probe(dir)), {}, nullptr);
    landed = fs::exists(dir + "/probe");
    control = run_unisolated(sh(submount_write_probe(dir) + "rm -f " + dir + "/probe"));
  });
  ASSERT_EQ(error, "");
  if (!unavailable.empty()) CORDON_SKIP_OR_FAIL(unavailable);
  // The probe works: unsandboxed, the submount is there and takes the write.
  EXPECT_EQ(control.stdout_data, "visible\nwrote\n") << control.stderr_data;
  EXPECT_EQ(inside.outcome, Outcome::kOk) << inside.error.value_or("") << inside.stderr_data;
  EXPECT_EQ(inside.stdout_data, facts().submount_visible ? "visible\nrefused\n" : "refused\n")
      << inside.stderr_data;
  EXPECT_NE(inside.stderr_data.find(facts().user_space_kernel ? "Permission denied"
                                                              : "Read-only file system"),
            std::string::npos)
      << inside.stderr_data;
  EXPECT_FALSE(landed);
}

// ---- resources ----

TEST_P(BackendAttack, CpuSpinTimesOutPromptly) {
  const auto start = Clock::now();
  const RunResult r = run(sh(cordon_test::kSpinSh, seconds(1)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_LT(Clock::now() - start, cordon_test::slack(milliseconds(1800) + facts().stop_slack));
}

// The init reaps and measures the code; killed at the deadline, it measures nothing: the
// peak RSS is unmeasured, CPU time comes only from a CPU group, the memory peak from the
// memory group. The signal is cordon's SIGKILL.
TEST_P(BackendAttack, TimedOutRunHasCordonsSignalAndOnlyMeasuredFigures) {
  const RunResult r = run(sh(cordon_test::kSpinSh, seconds(1)));
  ASSERT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  cordon_test::expect_stopped_by_cordon(r);
  EXPECT_FALSE(r.max_rss_kb.has_value());
  EXPECT_EQ(r.memory_peak_kb.has_value(), had_memory_group(r));
  if (::geteuid() == 0) {
    EXPECT_TRUE(had_memory_group(r)) << "as root, memory is a cgroup's";
  }
}

TEST_P(BackendAttack, MemoryFiguresOfAFiftyMibRun) {
  const RunResult r = run(py(cordon_test::kFiftyMibPython));
  // Unprivileged on a v1 host the namespace backend has no memory group (rlimits
  // instead): no peak to compare. As root both backends have one.
  if (!had_memory_group(r) && ::geteuid() != 0) {
    GTEST_SKIP() << "no memory cgroup for this user here";
  }
  cordon_test::expect_memory_figures_of_fifty_mib(r);
}

// The live graphs' source: a one-second loop growing to 50 MiB (under the 512 MiB default
// limit) is sampled from the sandbox's groups with rising memory, and, where the backend
// accounts it, CPU time that only grows.
TEST_P(BackendAttack, MemoryIsSampledWhileTheCodeRuns) {
  struct Samples final : RunObserver {
    void on_sample(const ResourceSample& sample) override { all.push_back(sample); }
    std::vector<ResourceSample> all;
  } samples;
  const RunResult r = backend().run(
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
  const Capabilities caps = backend().capabilities({});
  const Capability* mem = caps.find(Aspect::kMemory);
  ASSERT_NE(mem, nullptr);
  if (mem->mechanism.find("cgroup") == std::string::npos) {
    // No memory group (unprivileged on a v1 host: rlimits instead), so nothing to sample,
    // and the backend must not make samples up. As root both backends have one.
    EXPECT_NE(::geteuid(), 0U) << "as root, memory is a cgroup's: " << mem->mechanism;
    EXPECT_TRUE(memory.empty()) << memory.size() << " samples without a memory group";
    return;
  }
  ASSERT_GE(memory.size(), 3u) << samples.all.size() << " samples";
  // The highest, not the last: a last sample may catch Python freeing at exit.
  std::string seen;
  for (const std::uint64_t m : memory) seen += std::to_string(m >> 20) + " MiB, ";
  EXPECT_GT(std::ranges::max(memory), memory.front() + (20u << 20)) << "samples: " << seen;
  if (facts().samples_cpu) {
    ASSERT_GE(cpu.size(), 3u);
    EXPECT_TRUE(std::ranges::is_sorted(cpu));
    EXPECT_GT(cpu.back(), 0u);
  }
}

TEST_P(BackendAttack, MemoryHogIsOomKilled) {
  // 2 GiB in 16 MiB pieces, each written as it is made: the memory limit is what stops it,
  // not the kernel's overcommit check refusing one huge allocation (a MemoryError on a host
  // with little RAM, as the guest of tests/guest has).
  RunRequest req = py("b = [bytearray(16 << 20) for _ in range(128)]\nprint('allocated')");
  req.limits.memory_bytes = 128u << 20;
  const RunResult r = run(req);
  EXPECT_EQ(r.stdout_data, "");
  if (::geteuid() == 0) {
    EXPECT_TRUE(r.oom_killed) << to_string(r.outcome) << r.stderr_data << r.error.value_or("");
    EXPECT_EQ(r.outcome, Outcome::kLimitExceeded);
    EXPECT_EQ(r.limit, LimitKind::kMemory);
  } else {
    // Unprivileged on a v1 host (the namespace backend): RLIMIT_AS, so Python gets a
    // MemoryError.
    EXPECT_EQ(r.outcome, Outcome::kFailed);
    EXPECT_NE(r.stderr_data.find("MemoryError"), std::string::npos);
  }
  // Control: the same allocation under a higher ceiling succeeds (the probe can allocate).
  RunRequest ok = py("b = bytearray(64 << 20)\nprint('allocated')");
  ok.limits.memory_bytes = 512u << 20;
  const RunResult c = run(ok);
  EXPECT_EQ(c.stdout_data, "allocated\n") << c.stderr_data << c.error.value_or("");
  EXPECT_FALSE(c.oom_killed);
}

// The scratch /tmp is a sized tmpfs: filling it fails inside, and neither the host's /tmp
// nor its root file system pays for it.
//
// The host's free space is shared with every test CTest runs beside this one (-j2): in one
// CI run, another test's writes took 40 MB during this run's 0.2 s. So the host-side check gets up
// to three attempts and passes on the first that shows less than the scratch's size gone: a scratch
// kept on the host's disk would take its 32 MiB on every attempt. What /tmp is, the sandbox says
// itself (statfs), except under gVisor: it serves the container's /tmp, a bind of cordon's host
// tmpfs, through its gofer, so the sandbox sees 9p ("v9fs") whatever backs it, and the host-side
// check is the evidence there.
TEST_P(BackendAttack, BigWriteIntoTmpFailsWithEnospcAndHostDiskIsUntouched) {
  const auto free_bytes = [](const char* path) {
    struct statvfs s{};
    ::statvfs(path, &s);
    return static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
  };
  const auto fell_by = [](std::uint64_t before, std::uint64_t after) {
    return before > after ? before - after : 0;
  };
  constexpr std::uint64_t kScratch = 32u << 20;
  std::string drops;
  bool untouched = false;
  for (int attempt = 0; attempt < 3 && !untouched; ++attempt) {
    const std::uint64_t root_before = free_bytes("/");
    const std::uint64_t tmp_before = free_bytes("/tmp");
    RunRequest req =
        sh("stat -f -c %T /tmp; dd if=/dev/zero of=/tmp/big bs=1M count=1024 2>&1 | head -1; "
           "echo done");
    req.limits.scratch_bytes = kScratch;
    const RunResult r = run(req);
    const std::uint64_t root_fell = fell_by(root_before, free_bytes("/"));
    const std::uint64_t tmp_fell = fell_by(tmp_before, free_bytes("/tmp"));
    EXPECT_TRUE(r.stdout_data.starts_with(facts().user_space_kernel ? "v9fs\n" : "tmpfs\n"))
        << r.stdout_data << r.stderr_data;
    EXPECT_NE(r.stdout_data.find("No space left on device"), std::string::npos) << r.stdout_data;
    drops += "root -" + std::to_string(root_fell >> 20) + " MiB, /tmp -" +
             std::to_string(tmp_fell >> 20) + " MiB; ";
    untouched = root_fell < kScratch && tmp_fell < kScratch;
  }
  EXPECT_TRUE(untouched) << "the host's free space fell by the scratch's size on every attempt: "
                         << drops;
}

// A bash fork bomb must end (bounded by the processes ceiling, at the latest by the
// timeout) while a host-side spawn of /bin/true still completes within 1 s.
// `fn` names the bomb's function, which the host-side check looks for: each test has
// its own, so two bombs running in parallel tests cannot see each other's processes.
void expect_fork_bomb_bounded(const std::function<RunResult(const RunRequest&)>& run,
                              const std::string& fn, std::optional<std::uint64_t> max_processes,
                              const std::string& want_value, milliseconds stop_slack) {
  RunRequest req;
  req.language = Language::kBash;
  req.code = fn + "() { " + fn + " | " + fn + " & }; " + fn + "; sleep 2";
  req.timeout = seconds(4);
  req.limits.max_processes = max_processes;
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
  EXPECT_LT(Clock::now() - start, cordon_test::slack(seconds(6) + stop_slack));
  EXPECT_LT(worst_ms.load(), 1000 * cordon_test::time_factor());
  std::optional<std::string> limited;
  for (const auto& e : r.enforced) {
    if (e.aspect == Aspect::kProcesses) limited = e.value;
  }
  EXPECT_EQ(limited, want_value);
  EXPECT_NE(r.outcome, Outcome::kSandboxError) << r.error.value_or("");
  EXPECT_TRUE(host_processes_with(fn).empty());
}

// The least process limit this target accepts at or above `wanted` (gVisor's sandbox needs
// more host threads to start than runc's container does).
std::uint64_t process_limit_at_least(Backend& backend, std::uint64_t wanted) {
  const Capability* c = backend.capabilities({}).find(Aspect::kProcesses);
  return c != nullptr && c->range ? std::max(wanted, c->range->min) : wanted;
}

TEST_P(BackendAttack, ForkBombEndsAtThePidsLimitAndTheHostStaysResponsive) {
  const std::uint64_t limit = process_limit_at_least(backend(), 32);
  expect_fork_bomb_bounded([&](const RunRequest& r) { return run(r); }, facts().name + "bomb",
                           limit, std::to_string(limit), facts().stop_slack);
}

// No limits in the request: the default ceiling holds the bomb all the same.
TEST_P(BackendAttack, ForkBombWithoutLimitsEndsAtTheDefaultCeiling) {
  expect_fork_bomb_bounded([&](const RunRequest& r) { return run(r); }, facts().name + "ceiling",
                           std::nullopt, std::to_string(facts().default_process_ceiling),
                           facts().stop_slack);
}

// The same fork failure reads the same on every backend (process_limit_rule.h).
TEST_P(BackendAttack, AFailureAfterARefusedForkIsTheProcessLimit) {
  expect_one_process_limit_rule([&](const RunRequest& r) { return run(r); },
                                process_limit_at_least(backend(), 50),
                                /*sandbox_ends=*/facts().user_space_kernel);
}

// ---- process tree ----

TEST_P(BackendAttack, SetsidAndNohupDescendantsAreGoneAfterExitAndTimeout) {
  for (const bool timeout : {false, true}) {
    const std::string mark = facts().mark + (timeout ? ".337" : ".338");
    const RunResult r =
        run(sh("setsid sleep " + mark + " & nohup sleep " + mark +
                   " >/dev/null 2>&1 & sleep 0.2; " + (timeout ? "sleep 30" : "exit 0"),
               milliseconds(timeout ? 800 : 10000)));
    EXPECT_EQ(r.outcome, timeout ? Outcome::kTimedOut : Outcome::kOk) << r.error.value_or("");
    // The run ended once the whole sandbox was gone: nothing to wait for here.
    EXPECT_TRUE(host_processes_with(mark).empty()) << mark;
  }
}

}  // namespace
}  // namespace cordon::testing
