// The OCI runtime as the container backend drives it, without running a container: the
// global flags of every call (runtime_global_args), the argv RuntimeCli builds from them,
// and the gVisor platform choice (runsc_platform.h) as plain data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernel_features.h"
#include "proc_test_support.h"
#include "runsc_platform.h"
#include "runtime_cli.h"
#include "runtime_record.h"

namespace cordon::oci {
namespace {

using Args = std::vector<std::string>;

RuntimeProbe runsc_on(const std::string& platform) {
  RuntimeProbe p;
  p.name = "runsc";
  p.platform = platform;
  p.usable = true;
  return p;
}

TEST(RuntimeGlobalArgs, RuncTakesNone) {
  RuntimeProbe runc;
  runc.name = "runc";
  EXPECT_TRUE(runtime_global_args(runc, true, true).empty());
  EXPECT_TRUE(runtime_global_args(runc, false, false).empty());
}

TEST(RuntimeGlobalArgs, RunscGetsItsPlatformNetworkHostUdsAndSeccomp) {
  EXPECT_EQ(runtime_global_args(runsc_on("ptrace"), /*network_namespace=*/true, /*seccomp=*/true),
            (Args{"--platform=ptrace", "--network=none", "--host-uds=open", "--oci-seccomp"}));
  // Without the filter runsc must not be told to apply one; the network positive control
  // shares the host's.
  EXPECT_EQ(runtime_global_args(runsc_on("kvm"), /*network_namespace=*/false, /*seccomp=*/false),
            (Args{"--platform=kvm", "--network=host", "--host-uds=open"}));
}

TEST(RuntimeGlobalArgs, EveryCallCarriesThemAfterTheRoot) {
  const RuntimeCli cli("/usr/bin/runsc", "/run/x/state",
                       runtime_global_args(runsc_on("ptrace"), true, true));
  EXPECT_EQ(cli.argv({"delete", "--force", "c1"}),
            (Args{"/usr/bin/runsc", "--root", "/run/x/state", "--platform=ptrace", "--network=none",
                  "--host-uds=open", "--oci-seccomp", "delete", "--force", "c1"}));
  const RuntimeCli runc("/usr/sbin/runc", "/s");
  EXPECT_EQ(runc.argv({"kill", "c1", "KILL"}),
            (Args{"/usr/sbin/runc", "--root", "/s", "kill", "c1", "KILL"}));
}

TEST(RunscPlatform, PtraceByDefault) {
  const RunscPlatform p = choose_runsc_platform({"kvm", "ptrace"}, "", /*kvm_works=*/true);
  EXPECT_TRUE(p.usable);
  EXPECT_EQ(p.platform, "ptrace");
  EXPECT_NE(p.reason.find("default"), std::string::npos) << p.reason;
}

TEST(RunscPlatform, AnAskedPlatformIsUsedWhenOffered) {
  const RunscPlatform p = choose_runsc_platform({"kvm", "ptrace", "systrap"}, "systrap", false);
  EXPECT_TRUE(p.usable);
  EXPECT_EQ(p.platform, "systrap");
  EXPECT_NE(p.reason.find("CORDON_RUNSC_PLATFORM"), std::string::npos) << p.reason;
}

// Fail closed: an unusable choice is refused with the reason, never replaced by another.
TEST(RunscPlatform, AnUnusableChoiceIsRefusedWithTheReason) {
  const RunscPlatform absent = choose_runsc_platform({"kvm", "ptrace"}, "systrap", true);
  EXPECT_FALSE(absent.usable);
  EXPECT_TRUE(absent.platform.empty());
  EXPECT_EQ(absent.reason,
            "runsc platform 'systrap' (asked by $CORDON_RUNSC_PLATFORM) is not one this runsc "
            "has (kvm, ptrace)");
  const RunscPlatform kvm = choose_runsc_platform({"kvm", "ptrace"}, "kvm", /*kvm_works=*/false);
  EXPECT_FALSE(kvm.usable);
  EXPECT_NE(kvm.reason.find("/dev/kvm"), std::string::npos) << kvm.reason;
  EXPECT_TRUE(choose_runsc_platform({"kvm", "ptrace"}, "kvm", true).usable);
  // A runsc that did not answer offers nothing: not even the default is assumed.
  const RunscPlatform unknown = choose_runsc_platform({}, "", true);
  EXPECT_FALSE(unknown.usable);
  EXPECT_NE(unknown.reason.find("runsc help platforms"), std::string::npos) << unknown.reason;
  // A runsc without ptrace (none known today) is refused rather than given another one.
  EXPECT_FALSE(choose_runsc_platform({"kvm"}, "", true).usable);
}

// The installed runsc, when there is one: its list is asked once and has ptrace, and the
// probe names the platform it chose.
TEST(RunscPlatform, TheInstalledRunscOffersPtrace) {
  const auto runsc = find_tool("runsc");
  if (runsc.empty()) CORDON_SKIP_OR_FAIL("runsc is not installed");
  const auto offered = runsc_platforms(runsc);
  EXPECT_NE(std::find(offered.begin(), offered.end(), "ptrace"), offered.end());
  EXPECT_EQ(runsc_platforms(runsc), offered);
  if (::geteuid() != 0) return;
  ::unsetenv(kRunscPlatformVariable);
  const RuntimeProbe probe = probe_runtime("runsc");
  EXPECT_TRUE(probe.usable) << probe.reason;
  EXPECT_EQ(probe.platform, "ptrace");
  ::setenv(kRunscPlatformVariable, "nonesuch", 1);
  const RuntimeProbe refused = probe_runtime("runsc");
  ::unsetenv(kRunscPlatformVariable);
  EXPECT_FALSE(refused.usable);
  EXPECT_NE(refused.reason.find("'nonesuch'"), std::string::npos) << refused.reason;
}

// A bundle records the runtime that made it, so a later sweep asks that one with the same
// flags; a record that names anything else than a runtime cordon would find is not run.
TEST(RuntimeRecord, ASweepAsksTheRuntimeThatMadeTheContainer) {
  const auto runsc = find_tool("runsc");
  const auto runc = find_tool("runc");
  if (runsc.empty() || runc.empty()) CORDON_SKIP_OR_FAIL("needs runc and runsc installed");
  const cordon::testing::ScratchDir dir;
  const std::filesystem::path bundle(dir.path);
  const RuntimeCli made(runsc, "/run/x/state", runtime_global_args(runsc_on("ptrace"), true, true));
  ASSERT_TRUE(record_runtime(bundle, made));
  const RuntimeCli sweeper(runc, "/run/x/state");
  const RuntimeCli asked = recorded_runtime(bundle, sweeper);
  EXPECT_EQ(asked.argv({"delete", "c"}), made.argv({"delete", "c"}));
  EXPECT_FALSE(record_runtime(bundle, made)) << "a record is written once, never replaced";

  auto with_record = [&](const std::string& text) {
    std::ofstream(bundle / kRuntimeRecordName, std::ios::trunc) << text;
    return recorded_runtime(bundle, sweeper).argv({"delete", "c"});
  };
  const Args fallback = sweeper.argv({"delete", "c"});
  EXPECT_EQ(with_record("/bin/sh\n--platform=ptrace\n"), fallback);
  EXPECT_EQ(with_record("/tmp/runsc\n"), fallback) << "a runsc cordon would not find";
  EXPECT_EQ(with_record(runsc.string() + "\nrm -rf /\n"), fallback) << "options only";
  EXPECT_EQ(with_record(""), fallback);
  std::filesystem::remove(bundle / kRuntimeRecordName);
  EXPECT_EQ(recorded_runtime(bundle, sweeper).argv({"delete", "c"}), fallback);
}

}  // namespace
}  // namespace cordon::oci
