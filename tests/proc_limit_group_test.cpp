// Limit groups: discovery parsing without privileges, and on a real cgroup host (root) the
// limits judged by what the kernel did: an OOM kill, refused forks, processes gone.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cordon/lock_file.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/proc/limit_group.h"
#include "cordon/proc/pipe.h"
#include "cordon/proc/spawn.h"
#include "kernel_features.h"
#include "proc_test_support.h"

namespace cordon::proc {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kMiB = 1024 * 1024;

// --- parsing (no privileges) ---

// This machine kind: v1 hierarchies mounted one per controller, a nested memory cgroup.
constexpr const char* kHybridMountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:5 - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kHybridProcCgroup =
    "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/ab12\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupLayoutParse, MountsAfterOptionalFieldsWithOptions) {
  const auto mounts = parse_cgroup_mounts(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 6U);  // the tmpfs is not a cgroup mount
  EXPECT_EQ(mounts[2].mount_point, "/sys/fs/cgroup/memory");
  EXPECT_FALSE(mounts[2].v2);
  EXPECT_EQ(mounts[2].options, (std::vector<std::string>{"rw", "memory"}));
  EXPECT_TRUE(mounts[5].v2);
  EXPECT_EQ(parse_cgroup_mounts("41 31 0:38 / /a\\040b rw - cgroup2 none rw\n")[0].mount_point,
            "/a b");
}

TEST(CgroupLayoutParse, ProcCgroupLines) {
  const auto entries = parse_proc_cgroup("2:cpu,cpuacct:/a:b\n0::/user.slice/x.scope\n");
  ASSERT_EQ(entries.size(), 2U);
  EXPECT_EQ(entries[0].id, 2);
  EXPECT_EQ(entries[0].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(entries[0].path, "/a:b");  // a ':' in the path stays
  EXPECT_EQ(entries[1].id, 0);
  EXPECT_TRUE(entries[1].controllers.empty());
  EXPECT_EQ(entries[1].path, "/user.slice/x.scope");
}

struct MatchCase {
  const char* name;
  const char* mountinfo;
  const char* proc_cgroup;
  const char* cgroup_root;
  const char* controller;  // nullptr: the v2 hierarchy
  const char* want_dir;    // "" : none found
};

class CgroupLayoutMatch : public ::testing::TestWithParam<MatchCase> {};

TEST_P(CgroupLayoutMatch, OwnDirectory) {
  const auto& c = GetParam();
  const auto all = match_cgroup_hierarchies(parse_cgroup_mounts(c.mountinfo),
                                            parse_proc_cgroup(c.proc_cgroup), c.cgroup_root);
  const CgroupHierarchy* h =
      c.controller != nullptr ? find_v1_hierarchy(all, c.controller) : find_v2_hierarchy(all);
  if (std::string(c.want_dir).empty()) {
    EXPECT_EQ(h, nullptr) << (h != nullptr ? h->own_dir.string() : "");
  } else {
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->own_dir, fs::path(c.want_dir));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CgroupLayoutMatch,
    ::testing::Values(
        MatchCase{"hybrid_memory_nested", kHybridMountinfo, kHybridProcCgroup, "/sys/fs/cgroup",
                  "memory", "/sys/fs/cgroup/memory/process_api/ab12"},
        MatchCase{"hybrid_pids_root", kHybridMountinfo, kHybridProcCgroup, "/sys/fs/cgroup", "pids",
                  "/sys/fs/cgroup/pids"},
        MatchCase{"hybrid_cpuacct_separate", kHybridMountinfo, kHybridProcCgroup, "/sys/fs/cgroup",
                  "cpuacct", "/sys/fs/cgroup/cpuacct"},
        MatchCase{"hybrid_v2_unified", kHybridMountinfo, kHybridProcCgroup, "/sys/fs/cgroup",
                  nullptr, "/sys/fs/cgroup/unified"},
        MatchCase{"hybrid_no_freezer_line", kHybridMountinfo, kHybridProcCgroup, "/sys/fs/cgroup",
                  "freezer", ""},
        MatchCase{"other_root_sees_nothing", kHybridMountinfo, kHybridProcCgroup, "/tmp/fake",
                  "memory", ""},
        MatchCase{"comounted_cpu_cpuacct",
                  "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
                  "3:cpu,cpuacct:/user.slice\n", "/sys/fs/cgroup", "cpuacct",
                  "/sys/fs/cgroup/cpu,cpuacct/user.slice"},
        MatchCase{"pure_v2", "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
                  "0::/user.slice/user-1000.slice/session-2.scope\n", "/sys/fs/cgroup", nullptr,
                  "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"},
        MatchCase{"subtree_bind_container",
                  "500 400 0:32 /docker/c1 /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                  "4:memory:/docker/c1/inner\n", "/sys/fs/cgroup", "memory",
                  "/sys/fs/cgroup/memory/inner"},
        MatchCase{"subtree_bind_not_ours",
                  "500 400 0:32 /docker/c1 /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                  "4:memory:/docker/c10\n", "/sys/fs/cgroup", "memory", ""},
        MatchCase{"hidden_by_cgroup_namespace",
                  "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/../../x\n",
                  "/sys/fs/cgroup", nullptr, ""}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// --- a host without cgroups (a fake root: no privileges needed) ---

TEST(LimitGroupNoCgroups, FakeRootGivesReasonsAndEnforcesNothing) {
  testing::ScratchDir scratch;
  LimitGroupOptions options;
  options.cgroup_root = scratch.path;
  for (const auto kind : {LimitKindCg::kMemory, LimitKindCg::kProcesses, LimitKindCg::kCpu}) {
    const auto reason = LimitGroup::unavailable_reason(kind, options);
    EXPECT_NE(reason.find("controller mounted under " + scratch.path), std::string::npos) << reason;
  }
  EXPECT_NE(LimitGroup::unavailable_reason(LimitKindCg::kMemory, options).find("no memory"),
            std::string::npos);
  options.cpus = 1.0;
  Limits limits;
  limits.memory_bytes = 64 * kMiB;
  limits.max_processes = 8;
  auto group = LimitGroup::create(limits, options);
  ASSERT_TRUE(group.has_value()) << group.error().describe();
  EXPECT_TRUE(group->enforced().empty());
  EXPECT_EQ(group->v2_dir_fd(), -1);
  EXPECT_TRUE(group->join(::getpid()).has_value());  // nothing to join
}

// --- live, on this host's cgroups (root) ---

// Every cordon-<our pid>-* directory where cordon makes its groups in every hierarchy (below
// our own cgroup, or on a pure v2 host the delegated parent), but the leaf we may live in.
std::vector<fs::path> our_group_dirs() {
  std::vector<fs::path> out;
  auto all = discover_cgroup_hierarchies("/sys/fs/cgroup");
  if (!all) return out;
  const std::string prefix = "cordon-" + std::to_string(::getpid()) + "-";
  for (const auto& h : *all) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(group_parent_dir(h), ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with(prefix) && name != prefix + "0") out.push_back(e.path());
    }
  }
  return out;
}

fs::path v1_own_dir(const char* controller) {
  auto all = discover_cgroup_hierarchies("/sys/fs/cgroup");
  if (!all) return {};
  const auto* h = find_v1_hierarchy(*all, controller);
  return h != nullptr ? h->own_dir : fs::path();
}

// A child that waits on stdin before it execs the program: the window in which the parent
// joins it to the groups. Writing a line releases it.
struct HeldChild {
  ChildProcess child;
  UniqueFd release;
  [[nodiscard]] bool go() const { return ::write(release.get(), "\n", 1) == 1; }
};

Result<HeldChild> spawn_held(const std::string& then_exec) {
  auto pipe = make_pipe();
  if (!pipe) return std::unexpected(pipe.error());
  SpawnOptions opts;
  opts.path = "/bin/sh";
  opts.argv = {"sh", "-c", "read x; exec " + then_exec};
  opts.env = {"PATH=/usr/bin:/bin"};
  opts.stdin_fd = pipe->read.get();
  auto child = spawn(opts);
  if (!child) return std::unexpected(child.error());
  return HeldChild{std::move(*child), std::move(pipe->write)};
}

std::vector<pid_t> members(const fs::path& dir) {
  std::vector<pid_t> out;
  std::istringstream in(testing::read_file((dir / "cgroup.procs").string()).value_or(""));
  for (pid_t p = 0; in >> p;) out.push_back(p);
  return out;
}

class LimitGroupLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      CORDON_SKIP_OR_FAIL("not root: no cgroup v1 delegation for us");
    }
    for (const auto kind : {LimitKindCg::kMemory, LimitKindCg::kProcesses}) {
      const auto reason = LimitGroup::unavailable_reason(kind);
      if (!reason.empty()) {
        CORDON_SKIP_OR_FAIL(reason);
      }
    }
  }
  void TearDown() override {
    if (!IsSkipped()) {
      EXPECT_EQ(our_group_dirs(), std::vector<fs::path>{});
    }
  }
  static Limits limits(std::uint64_t memory, std::uint64_t processes) {
    Limits l;
    l.memory_bytes = memory;
    l.max_processes = processes;
    return l;
  }
};

// The cgroup v1 hybrid layout (this machine kind, CI): one group per hierarchy, v1 files,
// v1's OOM and pids accounting. A pure v2 host has no such layout to check; the backends'
// suites cover its groups there (tests/guest, docs/GUEST.md).
class LimitGroupLiveV1 : public LimitGroupLive {
 protected:
  void SetUp() override {
    if (v1_own_dir("memory").empty() || v1_own_dir("pids").empty()) {
      GTEST_SKIP() << "not a cgroup v1 hybrid host: no v1 memory and pids hierarchies";
    }
    LimitGroupLive::SetUp();
  }
};

TEST_F(LimitGroupLiveV1, EnforcedNamesV1MechanismsAndLimitsAreInPlaceBeforeJoin) {
  LimitGroupOptions options;
  options.cpus = 0.5;
  auto group = LimitGroup::create(limits(64 * kMiB, 8), options);
  ASSERT_TRUE(group.has_value()) << group.error().describe();
  ASSERT_EQ(group->enforced().size(), 3U);
  EXPECT_TRUE(group->has(LimitKindCg::kMemory));
  EXPECT_TRUE(group->has(LimitKindCg::kProcesses));
  EXPECT_TRUE(group->has(LimitKindCg::kCpu));
  for (const auto& e : group->enforced()) {
    EXPECT_TRUE(e.mechanism.starts_with("cgroup v1 ")) << e.mechanism;
    if (e.kind == LimitKindCg::kMemory) {
      EXPECT_EQ(e.value, "64 MiB");
      EXPECT_NE(e.mechanism.find("memory.memsw.limit_in_bytes"), std::string::npos);
    }
    if (e.kind == LimitKindCg::kProcesses) {
      EXPECT_EQ(e.value, "8");
    }
  }
  EXPECT_EQ(group->v2_dir_fd(), -1);  // hybrid: no v2 group for clone3

  // Groups sit under our own cgroup of each hierarchy (memory is nested here), with the
  // limits written: nothing ever joins a group before they are.
  const auto dirs = our_group_dirs();
  ASSERT_EQ(dirs.size(), 4U);  // memory, pids, cpu, cpuacct
  for (const auto& d : dirs) {
    if (d.parent_path() == v1_own_dir("memory")) {
      EXPECT_EQ(testing::read_file((d / "memory.limit_in_bytes").string()), "67108864\n");
      EXPECT_EQ(testing::read_file((d / "memory.memsw.limit_in_bytes").string()), "67108864\n");
    } else if (d.parent_path() == v1_own_dir("pids")) {
      EXPECT_EQ(testing::read_file((d / "pids.max").string()), "8\n");
    } else if (d.parent_path() == v1_own_dir("cpu")) {
      EXPECT_EQ(testing::read_file((d / "cpu.cfs_quota_us").string()), "50000\n");
    } else {
      EXPECT_EQ(d.parent_path(), v1_own_dir("cpuacct"));
    }
  }

  auto held = spawn_held("/bin/true");
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  ASSERT_TRUE(group->join(held->child.pid()).has_value());
  for (const auto& d : dirs) EXPECT_EQ(members(d), std::vector<pid_t>{held->child.pid()}) << d;
  ASSERT_TRUE(held->go());
  ASSERT_TRUE(held->child.wait().has_value());
  EXPECT_GT(group->stats().cpu_usec.value_or(0), 0);
  ASSERT_TRUE(group->remove(std::chrono::steady_clock::now() + seconds(2)).has_value());
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d;
  EXPECT_TRUE(group->enforced().empty());
}

TEST_F(LimitGroupLiveV1, AChildPlacesItselfThroughSelfJoinFds) {
  LimitGroupOptions options;
  options.cpus = 0.5;
  auto group = LimitGroup::create(limits(64 * kMiB, 8), options);
  ASSERT_TRUE(group.has_value()) << group.error().describe();
  const auto dirs = our_group_dirs();
  ASSERT_EQ(dirs.size(), 4U);  // memory, pids, cpu, cpuacct: all v1 here
  auto fds = group->self_join_fds();
  ASSERT_TRUE(fds.has_value()) << fds.error().describe();
  ASSERT_EQ(fds->size(), 4U);

  auto release = make_pipe();
  auto joined = make_pipe();
  ASSERT_TRUE(release.has_value() && joined.has_value());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls here: write "0" (ourselves) to each, say so, wait.
    char ok = 'y';
    for (const auto& fd : *fds) {
      if (::write(fd.get(), "0", 1) != 1) ok = 'n';
    }
    if (::write(joined->write.get(), &ok, 1) != 1) ::_exit(2);
    release->write.reset();  // our copy, or the parent's close would never reach us
    char c = 0;
    (void)::read(release->read.get(), &c, 1);
    ::_exit(0);
  }
  fds->clear();
  joined->write.reset();
  release->read.reset();
  char ok = 0;
  ASSERT_EQ(::read(joined->read.get(), &ok, 1), 1);
  EXPECT_EQ(ok, 'y');
  // Only the v1 groups exist here, so join(pid, /*include_v1=*/false) adds nothing.
  EXPECT_TRUE(group->join(child, /*include_v1=*/false).has_value());
  for (const auto& d : dirs) EXPECT_EQ(members(d), std::vector<pid_t>{child}) << d;
  release->write.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(group->remove(std::chrono::steady_clock::now() + seconds(2)).has_value());
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d;
}

constexpr const char* kAllocate512MiB = "/usr/bin/python3 -c 'b=bytearray(512*1024*1024)'";

TEST_F(LimitGroupLive, PositiveControlAllocationSucceedsWithoutAGroup) {
  auto held = spawn_held(kAllocate512MiB);
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  ASSERT_TRUE(held->go());
  auto exit = held->child.wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited());
  EXPECT_EQ(exit->exit_code(), 0);
}

TEST_F(LimitGroupLive, AllocationOverTheMemoryLimitIsOomKilled) {
  auto group = LimitGroup::create(limits(64 * kMiB, 64));
  ASSERT_TRUE(group.has_value()) << group.error().describe();
  auto held = spawn_held(kAllocate512MiB);
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  ASSERT_TRUE(group->join(held->child.pid()).has_value());
  ASSERT_TRUE(held->go());
  auto exit = held->child.wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal(), SIGKILL);
  // Read before removal: v1 keeps the count in this group only. The files were opened by
  // create(), before the kill: stats() reads them again from their start, and sees now.
  const auto stats = group->stats();
  EXPECT_TRUE(stats.oom_killed);
  EXPECT_FALSE(stats.pids_limit_hit);
  ASSERT_TRUE(stats.memory_peak_kb.has_value());
  EXPECT_LE(*stats.memory_peak_kb, 64 * 1024);
  EXPECT_GT(*stats.memory_peak_kb, 32 * 1024);
  EXPECT_TRUE(group->remove(std::chrono::steady_clock::now() + seconds(2)).has_value());
}

TEST_F(LimitGroupLiveV1, ForksStopAtMaxProcessesAndRemoveKillsTheRest) {
  auto group = LimitGroup::create(limits(256 * kMiB, 8));
  ASSERT_TRUE(group.has_value()) << group.error().describe();
  const auto dirs = our_group_dirs();
  fs::path pids_dir;
  for (const auto& d : dirs) {
    if (d.parent_path() == v1_own_dir("pids")) pids_dir = d;
  }
  ASSERT_FALSE(pids_dir.empty());
  // 30 background sleeps against a limit of 8: bounded, not a fork bomb.
  auto held = spawn_held("/bin/sh -c 'for i in $(seq 1 30); do sleep 5 & done; wait'");
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  ASSERT_TRUE(group->join(held->child.pid()).has_value());
  ASSERT_TRUE(held->go());

  std::size_t most = 0;
  const auto until = std::chrono::steady_clock::now() + seconds(3);
  while (!group->stats().pids_limit_hit && std::chrono::steady_clock::now() < until) {
    most = std::max(most, members(pids_dir).size());
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_TRUE(group->stats().pids_limit_hit);
  const auto left = members(pids_dir);
  most = std::max(most, left.size());
  EXPECT_LE(most, 8U);
  EXPECT_GE(left.size(), 2U);  // the sleeps that did start are still there
  // pids.peak, where the kernel has it, is the kernel's own word on "never above 8".
  if (auto peak = testing::read_file((pids_dir / "pids.peak").string())) {
    EXPECT_LE(std::stoi(*peak), 8);
  }

  // remove() must kill members itself: v1 has no cgroup.kill.
  ASSERT_TRUE(group->remove(std::chrono::steady_clock::now() + seconds(2)).has_value());
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d;
  for (const pid_t p : left) {
    if (p != held->child.pid()) {
      EXPECT_TRUE(testing::eventually_dead(p, "sleep")) << p;
    }
  }
  ASSERT_TRUE(held->child.wait().has_value());
}

TEST_F(LimitGroupLiveV1, DestructorKillsMembersAndRemovesGroups) {
  std::vector<fs::path> dirs;
  pid_t member = -1;
  HeldChild held;
  {
    auto group = LimitGroup::create(limits(64 * kMiB, 8));
    ASSERT_TRUE(group.has_value()) << group.error().describe();
    dirs = our_group_dirs();
    ASSERT_EQ(dirs.size(), 2U);
    auto h = spawn_held("/bin/sleep 30");
    ASSERT_TRUE(h.has_value()) << h.error().describe();
    held = std::move(*h);
    member = held.child.pid();
    ASSERT_TRUE(group->join(member).has_value());
    ASSERT_TRUE(held.go());
    LimitGroup moved = std::move(*group);  // the moved-from one owns nothing
  }
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d;
  auto exit = held.child.wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal(), SIGKILL);
}

TEST_F(LimitGroupLiveV1, SweepRemovesGroupsOfDeadOwnersOnly) {
  // A pid that is certainly dead: a child we started and reaped.
  SpawnOptions opts;
  opts.path = "/bin/true";
  opts.argv = {"true"};
  auto done = spawn(opts);
  ASSERT_TRUE(done.has_value());
  const pid_t dead = done->pid();
  ASSERT_TRUE(done->wait().has_value());

  const fs::path memory = v1_own_dir("memory");
  const fs::path pids = v1_own_dir("pids");
  const fs::path stale_memory = memory / ("cordon-" + std::to_string(dead) + "-1");
  const fs::path stale_pids = pids / ("cordon-" + std::to_string(dead) + "-1");
  // A live owner's group, its lock held (make_run_cgroup_dir's) though the pid in its name
  // reads as dead here, as for an owner in another PID namespace (issue #40, item 6).
  const fs::path live = memory / ("cordon-" + std::to_string(dead) + "-999999");
  for (const auto& d : {stale_memory, stale_pids, live}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d << ": " << std::strerror(errno);
  }
  auto live_lock = try_lock_dir(live);
  ASSERT_TRUE(live_lock.has_value() && live_lock->valid());
  // Something still runs in the stale group, as after a cordon that was SIGKILLed.
  auto held = spawn_held("/bin/sleep 30");
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  ASSERT_TRUE(testing::read_file((stale_memory / "cgroup.procs").string()).has_value());
  {
    std::ofstream(stale_memory / "cgroup.procs") << held->child.pid() << "\n";
  }
  ASSERT_EQ(members(stale_memory), std::vector<pid_t>{held->child.pid()});

  auto removed = sweep_stale_limit_groups();
  ASSERT_TRUE(removed.has_value()) << removed.error().describe();
  EXPECT_GE(*removed, 2);
  EXPECT_FALSE(fs::exists(stale_memory));
  EXPECT_FALSE(fs::exists(stale_pids));
  EXPECT_TRUE(fs::exists(live));
  auto exit = held->child.wait();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal(), SIGKILL);
  EXPECT_EQ(::rmdir(live.c_str()), 0);
}

}  // namespace
}  // namespace cordon::proc
