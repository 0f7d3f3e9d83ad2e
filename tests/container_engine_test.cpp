// The container backend in engine mode (podman with --runtime runc), a smaller set than
// the OCI runtime mode's: it runs, its privileges, the network, the filesystem, a timeout,
// a flood of output at the deadline, an OOM kill reported as such, the request's variables
// (and a stored environment refused), nothing left behind, and a dead instance's
// containers swept by name. The image is made from this host's files by
// tests/make_engine_image.sh (nothing can be pulled here); CI installs podman
// (scripts/install-deps.sh) and turns a skip into a failure.
//
// Needs root and podman: skips with the reason otherwise, unless
// CORDON_REQUIRE_KERNEL_FEATURES=1 (CI), which turns the skip into a failure.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "claims_match.h"
#include "container_backend.h"
#include "container_settings.h"
#include "cordon/cancel.h"
#include "cordon/scope_exit.h"
#include "engine_run.h"
#include "kernel_features.h"
#include "proc_test_support.h"
#include "run_request_support.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kImage = "localhost/cordon-engine-test:2";

// Engine runs start podman: a longer default timeout than the other backends' tests.
RunRequest sh(std::string code, milliseconds timeout = seconds(20)) {
  return testing::sh(std::move(code), timeout);
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (oci::find_tool("podman").empty()) CORDON_SKIP_OR_FAIL("podman is not installed");
    const std::string make =
        std::string(CORDON_TEST_SOURCE_DIR) + "/make_engine_image.sh " + kImage;
    ASSERT_EQ(std::system(make.c_str()), 0) << "could not make the test image";
    ::setenv("CORDON_RUNTIME_DIR", runtime_.path.c_str(), 1);
    oci::ContainerOptions o;
    o.engine = "podman";
    o.image = kImage;
    backend_ = std::make_unique<oci::ContainerBackend>(o);
    if (!backend_->probe().available) CORDON_SKIP_OR_FAIL(backend_->probe().reason);
    ASSERT_TRUE(backend_->prepare());
  }
  void TearDown() override {
    backend_.reset();
    ::unsetenv("CORDON_RUNTIME_DIR");
  }
  RunResult run(const RunRequest& r) { return backend_->run(r, {}, nullptr); }

  testing::ScratchDir runtime_;
  std::unique_ptr<oci::ContainerBackend> backend_;
};

TEST_F(EngineTest, RunsAsNobodyWithoutCapabilitiesUnderThePolicy) {
  const RunResult r =
      run(sh("grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; id -u; "
             "python3 -c 'print(6*7)'"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data,
            "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
            "65534\n42\n");
  ASSERT_TRUE(r.policy.has_value());
  EXPECT_EQ(r.policy->name, "cordon-default");
}

// Engine mode's run reports what its capabilities() claim, in the same words: they once
// named the memory limit differently ("engine --memory" against the parent group's
// cgroup), and the network, environment, process tree and timeout too (issue #14).
TEST_F(EngineTest, ARunEnforcesWhatCapabilitiesClaim) {
  Limits asked;
  asked.memory_bytes = 96U << 20;
  asked.cpu_time = seconds(3);
  cordon::testing::expect_runs_enforce_what_is_claimed(
      [&](const RunRequest& req) { return run(req); }, *backend_, {Limits{}, asked});
}

TEST_F(EngineTest, ExitCodeStdinAndTimeout) {
  RunRequest req = sh("cat; exit 3");
  req.stdin_data = "in\n";
  RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kFailed) << r.error.value_or("");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_data, "in\n");
  r = run(sh("echo before; sleep 30", milliseconds(1500)));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("");
  EXPECT_EQ(r.stdout_data, "before\n");
}

TEST_F(EngineTest, HostLoopbackListenerReceivesNothing) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  RunRequest req =
      sh("import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', " +
         std::to_string(ntohs(a.sin_port)) +
         "))\n    print('connected')\nexcept OSError as e:\n    print('refused')\n");
  req.language = Language::kPython;
  const RunResult r = run(req);
  EXPECT_EQ(r.stdout_data, "refused\n") << r.stderr_data << r.error.value_or("");
  // Control: the same engine with the host's network reaches the listener.
  oci::ContainerOptions hostnet;
  hostnet.engine = "podman";
  hostnet.image = kImage;
  hostnet.network_namespace = false;
  oci::ContainerBackend open(hostnet);
  const RunResult c = open.run(req, {}, nullptr);
  EXPECT_EQ(c.stdout_data, "connected\n") << c.stderr_data << c.error.value_or("");
  ::close(fd);
}

TEST_F(EngineTest, ReadOnlyRootWritableTmpAndOomReported) {
  RunResult r =
      run(sh("for d in / /usr /etc; do echo x > $d/f 2>/dev/null && echo wrote $d; done; "
             "echo x > /tmp/f && echo wrote tmp"));
  EXPECT_EQ(r.stdout_data, "wrote tmp\n") << r.stderr_data << r.error.value_or("");
  RunRequest oom = sh("b = bytearray(1 << 30)\nprint('allocated')");
  oom.language = Language::kPython;
  oom.limits.memory_bytes = 64u << 20;
  r = run(oom);
  EXPECT_TRUE(r.oom_killed) << to_string(r.outcome) << r.error.value_or("");
  EXPECT_EQ(r.outcome, Outcome::kLimitExceeded);
}

TEST_F(EngineTest, NothingLeftBehindAndInputsRefused) {
  RunRequest inputs = sh("true");
  inputs.input_files = {{"a", "b"}};
  EXPECT_EQ(run(inputs).outcome, Outcome::kSandboxError) << "engine mode takes no input files";
  (void)run(sh("true"));
  (void)run(sh("sleep 30", milliseconds(500)));
  const std::string ps = "podman ps --all --format '{{.Names}}' | grep -c '^cordon-eng-" +
                         std::to_string(::getpid()) + "-' > " + runtime_.path + "/ps";
  (void)std::system(ps.c_str());
  EXPECT_EQ(testing::read_file(runtime_.path + "/ps").value_or(""), "0\n");
  // No group of ours, and no parent folder the engine made, in any hierarchy.
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);) {
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    const std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1);
    if (ctrl.starts_with("name=")) continue;
    const std::string root = ctrl.empty() ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup/" + ctrl;
    for (const auto& e : fs::recursive_directory_iterator(root + line.substr(c2 + 1))) {
      const std::string n = e.path().filename();
      EXPECT_FALSE(n.starts_with("cordon-eng-" + std::to_string(::getpid()))) << e.path();
    }
  }
}

// What `podman ps --all` lists under `prefix`, one name a line (issue #40, item 14: the
// leftovers are found by their names, the engine's only record of whose they are).
std::string engine_containers(const std::string& prefix, const std::string& dir) {
  const std::string ps =
      "podman ps --all --format '{{.Names}}' --filter 'name=^" + prefix + "' > " + dir + "/ps 2>&1";
  EXPECT_EQ(std::system(ps.c_str()), 0);
  return testing::read_file(dir + "/ps").value_or("");
}

// Code that floods its output when its deadline comes (issue #40, item 14): a timeout,
// promptly, with the output capped, and the engine's container gone by name.
TEST_F(EngineTest, FloodAtTheDeadlineIsATimeoutPromptlyAndLeavesNothing) {
  for (const Language language : {Language::kSh, Language::kPython}) {
    SCOPED_TRACE(to_string(language));
    RunRequest req = sh(language == Language::kSh ? "while :; do echo xxxxxxxxxxxxxxxx; done"
                                                  : "while True:\n    print('x' * 64)\n",
                        seconds(1));
    req.language = language;
    req.limits.output_bytes = 64 * 1024;
    const auto start = std::chrono::steady_clock::now();
    const RunResult r = run(req);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error.value_or("") << r.stderr_data;
    // The engine's start is set-up, not the code's second; the stop must not wait on the
    // flood.
    EXPECT_LT(took - milliseconds(r.setup_ms), cordon_test::slack(seconds(5)));
    EXPECT_FALSE(r.stdout_data.empty());
    EXPECT_LE(r.stdout_data.size(), 64U * 1024U);
    EXPECT_TRUE(r.stdout_truncated);
  }
  EXPECT_EQ(engine_containers(oci::kEnginePrefix + std::to_string(::getpid()) + "-", runtime_.path),
            "");
}

// The request's environment variables reach the code in engine mode as in the runtime
// mode, beside the sandbox's own; a stored environment (a root filesystem of its own) is
// refused there, with the reason, since the engine runs its image (issue #40, item 14).
TEST_F(EngineTest, RequestVariablesReachTheCodeAndAnEnvironmentIsRefused) {
  RunRequest req = sh("echo \"$GREETING|$HOME|$LANG\"");
  req.env = {{"GREETING", "hello there"}};
  const RunResult r = run(req);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hello there|/tmp|C.UTF-8\n");

  BackendOptions given;
  given.engine = "podman";
  given.image = kImage;
  given.system_root = "/opt/some-environment";
  const auto refused = oci::container_settings(given);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("engine mode runs the engine's image"), std::string::npos)
      << refused.error().message;
  oci::ContainerOptions o;
  o.engine = "podman";
  o.image = kImage;
  o.system_root = "/";
  const oci::ContainerBackend with_root(o);
  EXPECT_FALSE(with_root.probe().available);
  EXPECT_NE(with_root.probe().reason.find("needs the OCI runtime mode"), std::string::npos)
      << with_root.probe().reason;
}

// A killed cordon's engine containers are known by name only ("cordon-eng-<instance>-"):
// the next instance's prepare removes a dead instance's (its lock free) and leaves a live
// one's (issue #40, item 14). The live one here is this test's own backend.
TEST_F(EngineTest, ADeadInstancesContainersAreSweptByNameALiveOnesKept) {
  const std::string dead = std::to_string(testing::dead_pid()) + "-0";
  const fs::path locks = fs::path(runtime_.path) / "oci" / "locks";
  std::string live;
  for (const auto& e : fs::directory_iterator(locks)) {
    live = e.path().stem();  // the only lock so far: this test's backend
  }
  ASSERT_FALSE(live.empty());
  std::ofstream(locks / (dead + ".lock")) << "";
  const std::string dead_name = oci::kEnginePrefix + dead + "-7";
  const std::string live_name = oci::kEnginePrefix + live + "-999";
  // Whatever the sweep did, nothing of this test stays in the engine.
  const ScopeExit remove_both([&] {
    const std::string rm =
        "podman rm --force --ignore --time 0 " + dead_name + " " + live_name + " >/dev/null 2>&1";
    (void)std::system(rm.c_str());
  });
  for (const std::string& name : {dead_name, live_name}) {
    const std::string start =
        "podman run -d --runtime runc --network=none --ulimit "
        "nofile=1024:1024 --ulimit nproc=1024:1024 --name " +
        name + " " + kImage + " sleep 60 >/dev/null";
    ASSERT_EQ(std::system(start.c_str()), 0) << name;
  }
  {
    oci::ContainerOptions o;
    o.engine = "podman";
    o.image = kImage;
    oci::ContainerBackend sweeper(o);
    ASSERT_TRUE(sweeper.prepare());
  }
  EXPECT_EQ(engine_containers(dead_name, runtime_.path), "");
  EXPECT_EQ(engine_containers(live_name, runtime_.path), live_name + "\n");
  EXPECT_FALSE(fs::exists(locks / (dead + ".lock")));
}

// ---- the engine's start is set-up, not the code's time ----

// run_in_engine straight, through an engine that is `podman` behind a script: the script
// can make the engine slow to start, as a loaded host does.
class EngineStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    podman_ = oci::find_tool("podman");
    if (podman_.empty()) CORDON_SKIP_OR_FAIL("podman is not installed");
    const std::string make =
        std::string(CORDON_TEST_SOURCE_DIR) + "/make_engine_image.sh " + kImage;
    ASSERT_EQ(std::system(make.c_str()), 0) << "could not make the test image";
    settings_.image = kImage;
    settings_.runs_dir = dir_.path;
    options_.engine = "podman";
    options_.image = kImage;
  }
  // An engine whose `run` sleeps `delay` seconds before it is podman's: one process (a
  // shell's sleep would outlive the shell killed at cancel).
  void slow_engine(const std::string& delay) {
    settings_.engine = dir_.path + "/engine";
    std::ofstream(settings_.engine)
        << "#!/usr/bin/python3\nimport os, sys, time\nif sys.argv[1:2] == ['run']: time.sleep("
        << delay << ")\nos.execv('" << podman_.string() << "', ['podman'] + sys.argv[1:])\n";
    fs::permissions(settings_.engine, fs::perms::owner_all);
  }
  RunResult run(const RunRequest& r, const CancelToken& cancel = {},
                milliseconds setup_bound = seconds(30)) {
    RunFrame frame;
    frame.backend = {"container", "test"};
    frame.setup_started = RunClock::now();
    RunStateReporter state(nullptr);
    const std::string id = std::to_string(::getpid()) + "-0-" + std::to_string(runs_++);
    return oci::run_in_engine(settings_, options_, r, oci::kEnginePrefix + id, dir_.path + "/" + id,
                              frame.setup_started + setup_bound, cancel, state, frame);
  }
  // What the runs left in the runs directory besides the engine script.
  std::vector<std::string> left_in_runs_dir() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.path)) {
      if (e.path().filename() != "engine") out.push_back(e.path().filename());
    }
    return out;
  }

  testing::ScratchDir dir_;
  fs::path podman_;
  oci::EngineSettings settings_;
  oci::ContainerOptions options_;
  int runs_ = 0;
};

// Seen in CI: `true` under the default 5 s timeout came back timed out, with nothing on
// stderr, on a host busy enough that `podman run` took longer than 5 s to start the code.
// The deadline counted the engine's start. Here the engine takes 3 s to start code that has
// 1.5 s: it runs to the end, and the 3 s are set-up.
TEST_F(EngineStartTest, TheDeadlineCountsFromTheCodesStartNotTheEngines) {
  slow_engine("3");
  const RunResult r = run(sh("echo hi", milliseconds(1500)));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error.value_or("") << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hi\n");
  EXPECT_GE(r.setup_ms, 3000);
  // ...and the deadline still holds once the code runs.
  const RunResult late = run(sh("echo before; sleep 30", milliseconds(1500)));
  EXPECT_EQ(late.outcome, Outcome::kTimedOut) << late.error.value_or("");
  EXPECT_EQ(late.stdout_data, "before\n");
  EXPECT_TRUE(left_in_runs_dir().empty()) << left_in_runs_dir().front();
}

// An engine that ends without starting the code (here: no such image, and --pull never
// keeps it from asking a registry) is the sandbox failing, in the engine's own words; it
// used to read as the code failing with exit status 125.
TEST_F(EngineStartTest, AnEngineThatNeverStartedTheCodeIsASandboxError) {
  settings_.engine = podman_;
  settings_.image = "localhost/cordon-no-such-image:0";
  const RunResult r = run(sh("true"));
  EXPECT_EQ(r.outcome, Outcome::kSandboxError) << to_string(r.outcome);
  EXPECT_NE(r.error.value_or("").find("podman ended before the code started"), std::string::npos)
      << r.error.value_or("");
  EXPECT_NE(r.error.value_or("").find("image not known"), std::string::npos)
      << r.error.value_or("");
  EXPECT_TRUE(left_in_runs_dir().empty());
}

// While the engine starts, cancel and the set-up bound end the run promptly, each as
// itself: cancelled before the code started, or a sandbox error naming the bound.
TEST_F(EngineStartTest, CancelAndTheSetUpBoundEndASlowStart) {
  slow_engine("20");
  CancelSource source;
  std::thread canceller([&source] {
    std::this_thread::sleep_for(milliseconds(500));
    source.cancel();
  });
  auto start = RunClock::now();
  const RunResult cancelled = run(sh("true"), source.token());
  canceller.join();
  EXPECT_EQ(cancelled.outcome, Outcome::kCancelled) << cancelled.error.value_or("");
  EXPECT_LT(RunClock::now() - start, cordon_test::slack(seconds(5)));

  start = RunClock::now();
  const RunResult bounded = run(sh("true"), {}, milliseconds(1000));
  EXPECT_EQ(bounded.outcome, Outcome::kSandboxError);
  EXPECT_NE(bounded.error.value_or("").find("did not start the code within the set-up bound"),
            std::string::npos)
      << bounded.error.value_or("");
  EXPECT_LT(RunClock::now() - start, cordon_test::slack(seconds(5)));
  EXPECT_TRUE(left_in_runs_dir().empty());
}

}  // namespace
}  // namespace cordon
