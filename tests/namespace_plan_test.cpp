// The namespace backend's plan, without privileges: namespaces, id maps, rlimits and
// their fallbacks, files, environment, JSON.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>

#include "cordon/policy/syscall_policy.h"
#include "host_layout_support.h"
#include "mount_apply.h"
#include "prebuilt_seccomp.h"
#include "sandbox_plan.h"

namespace cordon::ns {
namespace {

using testing::debian_layout;

struct Fixture {
  RunRequest req;
  PlanInputs in;
  Fixture() {
    req.code = "echo hi";
    in.request = &req;
    in.layout = debian_layout();
    in.host = {false, 1000, 1000};
    in.policy_name = "cordon-default";
    in.policy_version = 1;
    in.policy_hash = "sha256:abc";
  }
  SandboxPlan plan() {
    auto p = make_sandbox_plan(in);
    EXPECT_TRUE(p.has_value()) << p.error().describe();
    return p ? *p : SandboxPlan{};
  }
};

const NamedRlimit* find_rlimit(const SandboxPlan& p, int resource) {
  for (const auto& r : p.rlimits) {
    if (r.setting.resource == resource) return &r;
  }
  return nullptr;
}

TEST(NamespacePlan, EveryNamespaceButTime) {
  Fixture f;
  const SandboxPlan p = f.plan();
  for (const unsigned long flag : {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWNET,
                                   CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    EXPECT_NE(p.clone_flags & flag, 0u) << flag;
  }
  EXPECT_TRUE(p.loopback_up);
  EXPECT_TRUE(p.seccomp);
  EXPECT_TRUE(p.drop_capabilities);
}

TEST(NamespacePlan, NetworkSwitchForControls) {
  Fixture f;
  f.in.options.network_namespace = false;
  const SandboxPlan p = f.plan();
  EXPECT_EQ(p.clone_flags & CLONE_NEWNET, 0u);
  EXPECT_FALSE(p.loopback_up);
  EXPECT_EQ(std::count(p.namespaces.begin(), p.namespaces.end(), "network"), 0);
}

// With an allow-list (issue #16) the network namespace stays; the code is told where the
// relay is, in both spellings, and nothing else changes.
TEST(NamespacePlan, AnAllowListKeepsTheNamespaceAndSetsTheProxyVariables) {
  Fixture f;
  const SandboxPlan without = f.plan();
  f.req.network.allow = {"pypi.org"};
  const SandboxPlan p = f.plan();
  EXPECT_NE(p.clone_flags & CLONE_NEWNET, 0u);
  EXPECT_TRUE(p.loopback_up);
  for (const char* var : {"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
                          "HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
                          "NO_PROXY=localhost,127.0.0.1,::1"}) {
    EXPECT_EQ(std::count(p.env.begin(), p.env.end(), var), 1) << var;
  }
  EXPECT_EQ(
      std::count_if(without.env.begin(), without.env.end(),
                    [](const std::string& e) { return e.find("PROXY") != std::string::npos; }),
      0);
  EXPECT_EQ(p.env.size(), without.env.size() + 8);
}

// A loopback host the list allows is the host's, reached through the proxy: it is left out
// of NO_PROXY, which would send curl or urllib to the sandbox's own loopback (issue #40).
TEST(NamespacePlan, ALoopbackHostTheListAllowsIsNotInNoProxy) {
  const auto no_proxy = [](const std::vector<std::string>& allow) {
    Fixture f;
    f.req.network.allow = allow;
    const SandboxPlan p = f.plan();
    std::vector<std::string> out;
    for (const std::string& e : p.env) {
      if (e.starts_with("NO_PROXY=") || e.starts_with("no_proxy=")) out.push_back(e);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(no_proxy({"127.0.0.1:8080"}), (V{"NO_PROXY=localhost,::1", "no_proxy=localhost,::1"}));
  EXPECT_EQ(no_proxy({"api.test:8080", "127.0.0.0/8"}),
            (V{"NO_PROXY=localhost,::1", "no_proxy=localhost,::1"}));
  EXPECT_EQ(no_proxy({"localhost:8080"}), (V{"NO_PROXY=127.0.0.1,::1", "no_proxy=127.0.0.1,::1"}));
  EXPECT_EQ(no_proxy({"[::1]:8080"}),
            (V{"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"}));
  EXPECT_EQ(no_proxy({"localhost", "127.0.0.1", "::1"}), V{});
  EXPECT_EQ(no_proxy({"127.0.0.2:8080"}),
            (V{"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"}));
}

TEST(NamespacePlan, ProcSysIsReadOnlyUnlessSwitchedOffForAControl) {
  const auto proc_sys_read_only = [](const SandboxPlan& p) {
    return std::ranges::any_of(p.fs.steps, [](const policy::FsStep& s) {
      return s.op == policy::FsOp::kReadonly && s.target == "/proc/sys";
    });
  };
  Fixture f;
  EXPECT_TRUE(proc_sys_read_only(f.plan()));
  f.in.options.readonly_proc_sys = false;
  const SandboxPlan p = f.plan();
  EXPECT_FALSE(proc_sys_read_only(p));
  // Only that step goes: the other kernel knobs stay read-only.
  EXPECT_TRUE(std::ranges::any_of(p.fs.steps, [](const policy::FsStep& s) {
    return s.op == policy::FsOp::kReadonly && s.target == "/proc/sysrq-trigger";
  }));
}

TEST(NamespacePlan, UnprivilegedMapsOwnIdOnlyAndDeniesSetgroups) {
  Fixture f;
  const SandboxPlan p = f.plan();
  EXPECT_EQ(map_line(p.uid_map), "65534 1000 1\n");
  EXPECT_EQ(map_line(p.gid_map), "65534 1000 1\n");
  EXPECT_TRUE(p.deny_setgroups);
  EXPECT_FALSE(p.clear_groups);
}

TEST(NamespacePlan, RootMapsTheRunsOwnHostUidAndClearsGroups) {
  Fixture f;
  f.in.host = {true, 200007, 200007};
  const SandboxPlan p = f.plan();
  EXPECT_EQ(map_line(p.uid_map), "65534 200007 1\n");
  EXPECT_EQ(map_line(p.gid_map), "65534 200007 1\n");
  EXPECT_FALSE(p.deny_setgroups);
  EXPECT_TRUE(p.clear_groups);
}

TEST(NamespacePlan, DefaultRlimits) {
  Fixture f;
  f.in.nofile_hard = 512;  // never raised above the caller's hard limit
  const SandboxPlan p = f.plan();
  ASSERT_NE(find_rlimit(p, RLIMIT_CORE), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_CORE)->setting.hard, 0u);
  ASSERT_NE(find_rlimit(p, RLIMIT_NOFILE), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NOFILE)->setting.soft, 512u);
  ASSERT_NE(find_rlimit(p, RLIMIT_FSIZE), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_FSIZE)->setting.soft, kDefaultScratchBytes + (1u << 20));
  // No cgroup here and no limits asked for: the default ceilings by rlimit.
  ASSERT_NE(find_rlimit(p, RLIMIT_AS), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_AS)->setting.soft, kDefaultMemoryCeiling);
  ASSERT_NE(find_rlimit(p, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NPROC)->setting.soft, kDefaultProcessCeiling + 1);
}

TEST(NamespacePlan, DefaultCeilingsAreOverridableAndNeverZero) {
  Fixture f;
  f.in.options.default_memory_bytes = 96u << 20;
  f.in.options.default_max_processes = 7;
  SandboxPlan p = f.plan();
  ASSERT_NE(find_rlimit(p, RLIMIT_AS), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_AS)->setting.soft, 96u << 20);
  ASSERT_NE(find_rlimit(p, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NPROC)->setting.soft, 8u);
  // The request's own values win over the defaults.
  f.req.limits.max_processes = 3;
  p = f.plan();
  ASSERT_NE(find_rlimit(p, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NPROC)->setting.soft, 4u);
  f.in.options.default_max_processes = 0;
  EXPECT_FALSE(make_sandbox_plan(f.in).has_value());
}

TEST(NamespacePlan, DefaultCeilingsFillOnlyWhatTheRequestLeavesUnset) {
  Limits asked;
  asked.memory_bytes = 1u << 30;
  const Limits got = with_default_ceilings(asked, NamespaceOptions{});
  EXPECT_EQ(got.memory_bytes, 1u << 30);
  EXPECT_EQ(got.max_processes, kDefaultProcessCeiling);
  EXPECT_EQ(with_default_ceilings(Limits{}, NamespaceOptions{}).memory_bytes,
            kDefaultMemoryCeiling);
}

TEST(NamespacePlan, LimitsFallBackToRlimitsWithoutCgroups) {
  Fixture f;
  f.req.limits.memory_bytes = 128u << 20;
  f.req.limits.max_processes = 10;
  f.req.limits.cpu_time = std::chrono::milliseconds(1500);
  const SandboxPlan p = f.plan();
  ASSERT_NE(find_rlimit(p, RLIMIT_AS), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_AS)->setting.soft, 128u << 20);
  ASSERT_NE(find_rlimit(p, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NPROC)->setting.soft, 11u);  // + the namespace's init
  ASSERT_NE(find_rlimit(p, RLIMIT_CPU), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_CPU)->setting.soft, 2u);
}

TEST(NamespacePlan, CgroupCoveredLimitsGetNoRlimit) {
  Fixture f;
  f.req.limits.memory_bytes = 128u << 20;
  f.req.limits.max_processes = 10;
  f.in.cgroups = {true, true, false};
  const SandboxPlan p = f.plan();
  EXPECT_EQ(find_rlimit(p, RLIMIT_AS), nullptr);
  EXPECT_EQ(find_rlimit(p, RLIMIT_NPROC), nullptr);
}

TEST(NamespacePlan, CleanEnvironmentFromTheRequestOnly) {
  ::setenv("CORDON_PLAN_TEST_SECRET", "x", 1);
  Fixture f;
  f.req.env = {{"EXTRA", "1"}};
  const SandboxPlan p = f.plan();
  ::unsetenv("CORDON_PLAN_TEST_SECRET");
  const std::vector<std::string> want = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8",
                                         "EXTRA=1"};
  EXPECT_EQ(p.env, want);
}

TEST(NamespacePlan, InputFilesGoUnderTheWorkingDirectoryWithParents) {
  Fixture f;
  f.req.input_files = {{"data/sub/in.txt", "abc"}, {"top.txt", "x"}};
  const SandboxPlan p = f.plan();
  ASSERT_EQ(p.files.size(), 4u);
  EXPECT_EQ(p.files[0].path, "/tmp/data");
  EXPECT_TRUE(p.files[0].directory);
  EXPECT_EQ(p.files[1].path, "/tmp/data/sub");
  EXPECT_EQ(p.files[2].path, "/tmp/data/sub/in.txt");
  EXPECT_EQ(p.files[2].data, "abc");
  EXPECT_EQ(p.files[3].path, "/tmp/top.txt");
}

TEST(NamespacePlan, LongCodeGoesToAFileOutsideTheWorkingDirectory) {
  Fixture f;
  f.req.code = std::string(200 * 1024, '#');
  const SandboxPlan p = f.plan();
  ASSERT_EQ(p.files.size(), 1u);
  EXPECT_EQ(p.files[0].path, kCodeFile);
  EXPECT_EQ(p.argv.back(), kCodeFile);
}

TEST(NamespacePlan, InvalidRequestIsRefused) {
  Fixture f;
  f.req.input_files = {{"../escape", "x"}};
  EXPECT_FALSE(make_sandbox_plan(f.in).has_value());
}

// A pooled sandbox's run: its root is made, so the plan has no mount steps, and everything
// the order carries (argv, env, files, rlimits, the filesystem's home and cwd) is what the
// full plan has.
TEST(NamespacePlan, AMadeFilesystemLeavesOutOnlyTheMountSteps) {
  Fixture f;
  f.req.input_files = {{"data/in.txt", "abc"}};
  f.req.env = {{"EXTRA", "1"}};
  const SandboxPlan full = f.plan();
  f.in.filesystem_made = true;
  const SandboxPlan made = f.plan();
  EXPECT_FALSE(full.fs.steps.empty());
  EXPECT_TRUE(made.fs.steps.empty());
  EXPECT_EQ(made.fs.home, full.fs.home);
  EXPECT_EQ(made.fs.cwd, full.fs.cwd);
  EXPECT_EQ(made.fs.hostname, full.fs.hostname);
  EXPECT_EQ(made.fs.uid, full.fs.uid);
  EXPECT_EQ(made.fs.gid, full.fs.gid);
  EXPECT_EQ(made.cwd, full.cwd);
  EXPECT_EQ(made.executable, full.executable);
  EXPECT_EQ(made.argv, full.argv);
  EXPECT_EQ(made.env, full.env);
  ASSERT_EQ(made.files.size(), full.files.size());
  for (std::size_t i = 0; i < made.files.size(); ++i) {
    EXPECT_EQ(made.files[i].path, full.files[i].path);
    EXPECT_EQ(made.files[i].data, full.files[i].data);
  }
  ASSERT_EQ(made.rlimits.size(), full.rlimits.size());
  for (std::size_t i = 0; i < made.rlimits.size(); ++i) {
    EXPECT_EQ(made.rlimits[i].name, full.rlimits[i].name);
    EXPECT_EQ(made.rlimits[i].setting.soft, full.rlimits[i].setting.soft);
  }
}

TEST(NamespacePlan, JsonNamesPolicyMountsAndLimits) {
  Fixture f;
  f.req.limits.memory_bytes = 64u << 20;
  const nlohmann::json j = to_json(to_plan(f.plan()));
  EXPECT_EQ(j.at("seccomp").at("policy"), "cordon-default");
  EXPECT_EQ(j.at("seccomp").at("hash"), "sha256:abc");
  EXPECT_EQ(j.at("uid_map"), "65534 1000 1\n");
  EXPECT_TRUE(j.at("filesystem").is_object());
  bool has_as = false;
  for (const auto& r : j.at("rlimits")) has_as |= r.at("resource") == "RLIMIT_AS";
  EXPECT_TRUE(has_as);
  EXPECT_EQ(j.at("network"), "loopback only (lo up, no route out)");
}

// The BPF generated at build time must be exactly what libseccomp compiles now for the
// default policy, so the two can never drift apart unnoticed.
TEST(NamespaceSeccomp, PrebuiltDefaultProgramEqualsTheOneCompiledNow) {
  auto compiled = policy::compile_seccomp(policy::default_syscall_policy());
  ASSERT_TRUE(compiled.has_value()) << compiled.error().describe();
  const auto prebuilt = prebuilt_default_seccomp();
  ASSERT_TRUE(prebuilt.has_value()) << "the prebuilt program does not apply on this host";
  EXPECT_EQ(prebuilt->policy_name, compiled->policy_name);
  EXPECT_EQ(prebuilt->policy_version, compiled->policy_version);
  EXPECT_EQ(prebuilt->policy_hash, compiled->policy_hash);
  EXPECT_EQ(prebuilt->unknown_syscalls, compiled->unknown_syscalls);
  EXPECT_EQ(prebuilt->absent_on_arch, compiled->absent_on_arch);
  ASSERT_EQ(prebuilt->instructions.size(), compiled->instructions.size());
  EXPECT_EQ(std::memcmp(prebuilt->instructions.data(), compiled->instructions.data(),
                        compiled->instructions.size() * sizeof(sock_filter)),
            0);
  // And what the backend uses is the prebuilt one.
  auto used = default_seccomp_program();
  ASSERT_TRUE(used.has_value());
  EXPECT_EQ(used->instructions.size(), prebuilt->instructions.size());
}

// The fallback that makes a recursive bind's submounts read-only where mount_setattr is
// missing reads their mount points from /proc/self/mountinfo.
TEST(MountinfoParse, MountPointIsTheFifthFieldUnescaped) {
  char out[64];
  ASSERT_TRUE(mountinfo_mount_point(
      "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw", out, sizeof(out)));
  EXPECT_STREQ(out, "/mnt2");
  ASSERT_TRUE(
      mountinfo_mount_point("40 30 0:37 / /a\\040b\\134c rw - tmpfs tmpfs rw", out, sizeof(out)));
  EXPECT_STREQ(out, "/a b\\c");
  EXPECT_FALSE(mountinfo_mount_point("40 30 0:37 /", out, sizeof(out)));
  char tiny[4];
  EXPECT_FALSE(mountinfo_mount_point("1 2 3:4 / /long/path rw - x y rw", tiny, sizeof(tiny)));
}

TEST(MountinfoParse, StrictlyUnderMeansBelowAndNotBeside) {
  EXPECT_TRUE(path_strictly_under("/tmp/usr/share", "/tmp/usr"));
  EXPECT_FALSE(path_strictly_under("/tmp/usr", "/tmp/usr"));
  EXPECT_FALSE(path_strictly_under("/tmp/usrx/a", "/tmp/usr"));
  EXPECT_TRUE(path_strictly_under("/a", "/"));
  EXPECT_FALSE(path_strictly_under("/", "/"));
}

}  // namespace
}  // namespace cordon::ns
