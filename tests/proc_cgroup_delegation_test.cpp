// The route to a cgroup v2 parent cordon may hand controllers from (cgroup_delegation.h):
// the decision as a table, and the two cgroup operations it relies on, for real on this
// host's v2 tree (a hybrid host's controller-less tree serves: moving processes and killing
// a dead owner's groups need no controller). The systemd scope itself is exercised by the
// guest run (tests/guest, docs/GUEST.md): it needs systemd as PID 1.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cordon/proc/cgroup2.h"
#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/spawn.h"
#include "kernel_features.h"
#include "proc_test_support.h"

namespace cordon::proc {
namespace {

namespace fs = std::filesystem;

struct RouteCase {
  const char* name;
  V2Facts facts;
  V2Route route;
};

class DelegationRoute : public ::testing::TestWithParam<RouteCase> {};

TEST_P(DelegationRoute, FollowsTheFacts) {
  EXPECT_EQ(choose_v2_route(GetParam().facts), GetParam().route);
}

// V2Facts: offers_controllers, own_is_root, own_holds_processes, delegated_to_us, systemd,
// in_cordon_leaf.
INSTANTIATE_TEST_SUITE_P(
    Table, DelegationRoute,
    ::testing::Values(
        // A hybrid host's v2 tree: controller-less groups work anywhere.
        RouteCase{"no_controllers", {false, false, true, false, true, false}, V2Route::kOwnGroup},
        // A bare v2 host, cordon started from its init in the root group.
        RouteCase{"root_group", {true, true, true, false, false, false}, V2Route::kOwnGroup},
        // The common host: an ordinary service or login scope under systemd.
        RouteCase{
            "systemd_service", {true, false, true, false, true, false}, V2Route::kSystemdScope},
        // Started with Delegate=yes (systemd-run -p Delegate=yes, a unit with Delegate=).
        RouteCase{"delegated_by_systemd", {true, false, true, true, true, false}, V2Route::kLeaf},
        // v2 without systemd, in a group of its own (a container's cgroup namespace).
        RouteCase{"no_systemd", {true, false, true, false, false, false}, V2Route::kLeaf},
        // Started by a cordon (its CLI from the MCP server, a test): join its parent.
        RouteCase{
            "in_a_cordon_leaf", {true, false, true, false, true, true}, V2Route::kSiblingLeaf}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(DelegationNames, ScopeOwnerPid) {
  EXPECT_EQ(scope_owner_pid("cordon-123.scope"), 123);
  EXPECT_FALSE(scope_owner_pid("cordon-123-4").has_value());
  EXPECT_FALSE(scope_owner_pid("cordon-.scope").has_value());
  EXPECT_FALSE(scope_owner_pid("cordon-12x.scope").has_value());
  EXPECT_FALSE(scope_owner_pid("other-12.scope").has_value());
  EXPECT_FALSE(scope_owner_pid("cordon-0.scope").has_value());
}

// The facts are read from the group's own files (a fake group: plain files will do).
// The one reader of controller lists (cgroup.controllers, cgroup.subtree_control): whole
// entries only. The container's parent groups matched " pids" as a prefix before, so a
// controller named like another's start counted as offered.
TEST(DelegationFacts, AControllerListNamesWholeEntriesOnly) {
  EXPECT_TRUE(cgroupfs::has_word("cpuset cpu io memory pids\n", "memory"));
  EXPECT_TRUE(cgroupfs::has_word("cpuset cpu io memory pids\n", "pids"));
  EXPECT_TRUE(cgroupfs::has_word("cpuset cpu", "cpuset"));
  EXPECT_FALSE(cgroupfs::has_word("cpuset io", "cpu"));
  EXPECT_FALSE(cgroupfs::has_word("pids_extra memory_x\n", "pids"));
  EXPECT_FALSE(cgroupfs::has_word("pids_extra memory_x\n", "memory"));
  EXPECT_FALSE(cgroupfs::has_word("", "memory"));
  EXPECT_FALSE(cgroupfs::has_word("\n", "memory"));
}

TEST(DelegationFacts, ReadFromTheGroupsFiles) {
  testing::ScratchDir scratch;
  const fs::path group = fs::path(scratch.path) / "svc";
  fs::create_directories(group);
  std::ofstream(group / "cgroup.controllers") << "memory pids\n";
  std::ofstream(group / "cgroup.procs") << "12\n34\n";
  std::ofstream(group / "cgroup.type") << "domain\n";
  V2Facts f = read_v2_facts(group);
  EXPECT_TRUE(f.offers_controllers);
  EXPECT_FALSE(f.own_is_root);
  EXPECT_TRUE(f.own_holds_processes);
  EXPECT_FALSE(f.delegated_to_us);
  EXPECT_FALSE(f.in_cordon_leaf);

  std::ofstream(group / "cgroup.controllers") << "\n";
  fs::remove(group / "cgroup.type");
  f = read_v2_facts(group);
  EXPECT_FALSE(f.offers_controllers);
  EXPECT_TRUE(f.own_is_root);

  // A live cordon's leaf (ours will do) and a dead one's name.
  const fs::path leaf = fs::path(scratch.path) / ("cordon-" + std::to_string(::getpid()) + "-0");
  fs::create_directories(leaf);
  EXPECT_TRUE(read_v2_facts(leaf).in_cordon_leaf);
  EXPECT_FALSE(read_v2_facts(fs::path(scratch.path) / "cordon-1-2").in_cordon_leaf);
}

// A group's figures are read one way for every backend's groups, v1 and v2 (the control
// files as the kernel writes them, in a fake group directory).
TEST(GroupFigures, ReadV2AndV1ControlFiles) {
  testing::ScratchDir scratch;
  const fs::path v2 = fs::path(scratch.path) / "v2";
  const fs::path v1 = fs::path(scratch.path) / "v1";
  fs::create_directories(v2);
  fs::create_directories(v1);
  // Nothing there: nothing read, nothing claimed.
  EXPECT_FALSE(cgroupfs::memory_current(v2, true));
  EXPECT_FALSE(cgroupfs::cpu_usec(v1, false));
  EXPECT_FALSE(cgroupfs::oom_killed(v2, true));
  EXPECT_FALSE(cgroupfs::pids_max_hit(v1));

  std::ofstream(v2 / "memory.current") << "1048576\n";
  std::ofstream(v2 / "memory.peak") << "2097152\n";
  std::ofstream(v2 / "cpu.stat") << "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n";
  std::ofstream(v2 / "memory.events") << "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n";
  std::ofstream(v2 / "pids.events") << "max 0\n";
  EXPECT_EQ(cgroupfs::memory_current(v2, true), 1048576);
  EXPECT_EQ(cgroupfs::memory_peak(v2, true), 2097152);
  EXPECT_EQ(cgroupfs::cpu_usec(v2, true), 1500);
  EXPECT_TRUE(cgroupfs::oom_killed(v2, true));
  EXPECT_FALSE(cgroupfs::pids_max_hit(v2)) << "max 0: no fork was refused";

  std::ofstream(v1 / "memory.usage_in_bytes") << "4096\n";
  std::ofstream(v1 / "memory.max_usage_in_bytes") << "8192\n";
  std::ofstream(v1 / "cpuacct.usage") << "2500000\n";  // nanoseconds
  std::ofstream(v1 / "memory.oom_control") << "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n";
  std::ofstream(v1 / "pids.events") << "max 3\n";
  EXPECT_EQ(cgroupfs::memory_current(v1, false), 4096);
  EXPECT_EQ(cgroupfs::memory_peak(v1, false), 8192);
  EXPECT_EQ(cgroupfs::cpu_usec(v1, false), 2500);
  EXPECT_FALSE(cgroupfs::oom_killed(v1, false));
  EXPECT_TRUE(cgroupfs::pids_max_hit(v1));
  // The v1 names are not read for a v2 group, nor the other way round.
  EXPECT_FALSE(cgroupfs::memory_current(v1, true));
  EXPECT_FALSE(cgroupfs::cpu_usec(v2, false));
}

// A predicted parent never changes anything, and a fake cgroup root is never rearranged.
TEST(DelegationParent, APredictionOfAFakeRootMovesNothing) {
  testing::ScratchDir scratch;
  const fs::path group = fs::path(scratch.path) / "svc";
  fs::create_directories(group);
  std::ofstream(group / "cgroup.controllers") << "memory pids\n";
  std::ofstream(group / "cgroup.procs") << ::getpid() << "\n";
  std::ofstream(group / "cgroup.type") << "domain\n";
  CgroupHierarchy h{true, {}, group};
  auto parent = v2_group_parent(h, scratch.path, /*acquire=*/true);
  if (parent) {
    // No systemd here (kLeaf, our own group) or a scope to come (empty): never a move.
    EXPECT_TRUE(parent->dir.empty() || parent->dir == group) << parent->dir;
    EXPECT_FALSE(parent->via.empty());
  } else {
    EXPECT_NE(parent.error().message.find("bus"), std::string::npos) << parent.error().describe();
  }
  EXPECT_FALSE(fs::exists(group / ("cordon-" + std::to_string(::getpid()) + "-0")));
  EXPECT_FALSE(acquired_v2_parent().has_value());
}

// --- live, on this host's v2 tree (root) ---

class DelegationLive : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = own_cgroup2_dir();
    if (!dir) CORDON_SKIP_OR_FAIL("no cgroup v2: " + dir.error().describe());
    auto cg = Cgroup2::create(*dir);
    if (!cg) CORDON_SKIP_OR_FAIL("cannot create a cgroup v2 here: " + cg.error().describe());
    parent_ = *dir;
    group_.emplace(std::move(*cg));
  }

  // A `sleep 30` started inside `procs_fd`'s group.
  static Result<ChildProcess> sleeper(int procs_fd) {
    SpawnOptions opts;
    opts.path = "/bin/sleep";
    opts.argv = {"sleep", "30"};
    opts.cgroup_procs_fd = procs_fd;
    return spawn(opts);
  }

  static std::string procs(const fs::path& dir) {
    return cgroupfs::read(dir / "cgroup.procs").value_or("?");
  }

  fs::path parent_;
  std::optional<Cgroup2> group_;
};

TEST_F(DelegationLive, EveryProcessOfTheGroupMovesIntoTheLeaf) {
  auto a = sleeper(group_->procs_fd());
  auto b = sleeper(group_->procs_fd());
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_NE(procs(group_->path()).find(std::to_string(a->pid())), std::string::npos);
  const fs::path leaf = group_->path() / "leaf";
  auto moved = move_group_into_leaf(group_->path(), leaf);
  ASSERT_TRUE(moved.has_value()) << moved.error().describe();
  EXPECT_EQ(procs(group_->path()), "");
  const std::string in_leaf = procs(leaf);
  EXPECT_NE(in_leaf.find(std::to_string(a->pid()) + "\n"), std::string::npos) << in_leaf;
  EXPECT_NE(in_leaf.find(std::to_string(b->pid()) + "\n"), std::string::npos) << in_leaf;
  // ~Cgroup2 kills them and removes the leaf with the group.
}

TEST_F(DelegationLive, ADeadCordonsScopeIsEmptiedAndALiveOnesIsNot) {
  // A pid that surely ran and is gone: a child we reaped.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);

  // Scopes as systemd makes them, here below our own group (the slice of the test).
  const fs::path slice = group_->path();
  const fs::path dead_scope = slice / ("cordon-" + std::to_string(dead) + ".scope");
  const fs::path live_scope = slice / ("cordon-" + std::to_string(::getpid()) + ".scope");
  for (const auto& d : {dead_scope, dead_scope / ("cordon-" + std::to_string(dead) + "-3"),
                        live_scope, live_scope / "cordon-1-1"}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  }
  auto left = Cgroup2::adopt(dead_scope / ("cordon-" + std::to_string(dead) + "-3"));
  auto kept = Cgroup2::adopt(live_scope / "cordon-1-1");
  ASSERT_TRUE(left.has_value() && kept.has_value());
  auto leftover = sleeper(left->procs_fd());
  auto live_run = sleeper(kept->procs_fd());
  ASSERT_TRUE(leftover.has_value() && live_run.has_value());

  auto swept = sweep_dead_scopes(slice);
  ASSERT_TRUE(swept.has_value()) << swept.error().describe();
  EXPECT_EQ(*swept, 1);
  EXPECT_FALSE(fs::exists(dead_scope / ("cordon-" + std::to_string(dead) + "-3")));
  auto status = leftover->wait();  // killed by the sweep, not by us
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->signal(), SIGKILL);
  EXPECT_NE(procs(live_scope / "cordon-1-1").find(std::to_string(live_run->pid())),
            std::string::npos);
  // The scopes themselves are systemd's to collect; here, ours to remove (~Cgroup2 of
  // group_ removes the tree after killing what is left).
  (void)left->remove(std::chrono::steady_clock::now() + std::chrono::seconds(2));
}

}  // namespace
}  // namespace cordon::proc
