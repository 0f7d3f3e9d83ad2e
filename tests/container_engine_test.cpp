// The container backend in engine mode (podman with --runtime runc), a smaller set than
// the OCI runtime mode's: it runs, its privileges, the network, the filesystem, a timeout,
// an OOM kill reported as such, and nothing left behind. The image is made from this
// host's files by tests/make_engine_image.sh (nothing can be pulled here).
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

#include "claims_match.h"
#include "container_backend.h"
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

}  // namespace
}  // namespace cordon
