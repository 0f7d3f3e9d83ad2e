// Issue #40, item 3: every process is gone when a run's result is read, whatever PID 1 does.
// Each case runs orphan_reap_probe as PID 1 of a private PID namespace (`unshare --pid --fork
// --mount-proc`), where only that run's processes are seen: a fork bomb through an isolating
// backend (never the subprocess backend), bounded by the process limit, then no zombie may
// stay. "never-reaps": PID 1 reaps nothing but its one child, as this machine's PID 1 does;
// gVisor's stubs, orphaned when its sandbox ends, used to stay there as ~30 zombies.
// "cordon": cordon itself is PID 1 (pid1_init.h), and every orphan must be reaped.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cordon/proc/run_tool.h"
#include "kernel_features.h"
#include "proc_test_support.h"

namespace cordon {
namespace {

struct Case {
  const char* pid1;
  const char* backend;
};

class OrphanReap : public ::testing::TestWithParam<Case> {};

TEST_P(OrphanReap, NoZombieIsLeftAfterAForkBomb) {
  if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("needs root (unshare --pid, the container backend)");
  const auto unshare = proc::find_tool("unshare");
  if (unshare.empty()) CORDON_SKIP_OR_FAIL("no unshare(1)");
  testing::ScratchDir dir;
  const std::string command = unshare.string() + " --pid --fork --mount-proc " +
                              CORDON_TEST_ORPHAN_REAP_PROBE + " " + GetParam().pid1 + " " +
                              GetParam().backend + " " + dir.path + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string said;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) said.append(buf, n);
  const int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << said;
  if (WEXITSTATUS(status) == 77) CORDON_SKIP_OR_FAIL(said);
  EXPECT_EQ(WEXITSTATUS(status), 0) << said;
}

INSTANTIATE_TEST_SUITE_P(Backends, OrphanReap,
                         ::testing::Values(Case{"never-reaps", "runsc"},
                                           Case{"cordon", "namespace"}, Case{"cordon", "runc"},
                                           Case{"cordon", "runsc"}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return std::string(param_info.param.pid1 == std::string("cordon")
                                                  ? "CordonPid1_"
                                                  : "NoReaper_") +
                                  param_info.param.backend;
                         });

}  // namespace
}  // namespace cordon
