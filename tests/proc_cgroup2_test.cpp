#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cordon/lock_file.h"
#include "cordon/owner.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/spawn.h"
#include "proc_test_support.h"

namespace cordon::proc {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

TEST(Cgroup2Parse, OwnerPid) {
  EXPECT_EQ(cgroup_owner_pid("cordon-123-4"), 123);
  EXPECT_FALSE(cgroup_owner_pid("cordon-123").has_value());
  EXPECT_FALSE(cgroup_owner_pid("cordon-x-1").has_value());
  EXPECT_FALSE(cgroup_owner_pid("other-1-2").has_value());
  EXPECT_FALSE(cgroup_owner_pid("cordon-1-2x").has_value());
}

class Cgroup2Live : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = own_cgroup2_dir();
    if (!dir) GTEST_SKIP() << "no cgroup v2: " << dir.error().describe();
    auto cg = Cgroup2::create(*dir);
    if (!cg) GTEST_SKIP() << "cannot create a cgroup v2 here: " << cg.error().describe();
    parent_ = *dir;
  }
  fs::path parent_;
};

TEST_F(Cgroup2Live, KillReachesASetsidGrandchildAndRemoves) {
  auto cg = Cgroup2::create(parent_);
  ASSERT_TRUE(cg.has_value());
  const fs::path path = cg->path();
  EXPECT_EQ(path.parent_path(), parent_);
  EXPECT_TRUE(path.filename().string().starts_with("cordon-" + std::to_string(::getpid()) + "-"));

  testing::ScratchDir scratch;
  SpawnOptions opts;
  opts.path = "/bin/sh";
  opts.argv = {"sh", "-c",
               "setsid sh -c 'echo $$ > " + scratch.path + "/p.tmp; mv " + scratch.path +
                   "/p.tmp " + scratch.path +
                   "/p; exec sleep 30' & "
                   "while [ ! -s " +
                   scratch.path + "/p ]; do sleep 0.01; done"};
  opts.cgroup_procs_fd = cg->procs_fd();
  auto child = spawn(opts);
  ASSERT_TRUE(child.has_value()) << child.error().describe();
  ASSERT_TRUE(child->wait().has_value());
  const pid_t grandchild = std::stoi(testing::read_file(scratch.path + "/p").value_or("0"));
  ASSERT_GT(grandchild, 0);
  // It outlived its parent (once it has exec'd sleep, which may take a moment).
  bool alive = false;
  for (int i = 0; i < 200 && !alive; ++i) {
    alive = !testing::process_dead(grandchild, "sleep");
    if (!alive) ::usleep(10000);
  }
  EXPECT_TRUE(alive);

  ASSERT_TRUE(cg->kill().has_value());
  auto empty = cg->wait_empty(Cgroup2::Clock::now() + seconds(5));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(*empty);
  EXPECT_TRUE(testing::eventually_dead(grandchild, "sleep"));
  EXPECT_TRUE(cg->cpu_usage_usec().has_value());
  EXPECT_TRUE(cg->remove(Cgroup2::Clock::now() + seconds(5)).has_value());
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(Cgroup2Live, DestructorRemovesEvenWithChildCgroups) {
  fs::path path;
  {
    auto cg = Cgroup2::create(parent_);
    ASSERT_TRUE(cg.has_value());
    path = cg->path();
    ASSERT_EQ(::mkdir((path / "nested").c_str(), 0755), 0);  // as root code could
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(Cgroup2Live, SweepRemovesOnlyDeadOwners) {
  // A pid that is certainly dead: a child we started and reaped.
  SpawnOptions opts;
  opts.path = "/bin/true";
  opts.argv = {"true"};
  auto child = spawn(opts);
  ASSERT_TRUE(child.has_value());
  const pid_t dead = child->pid();
  ASSERT_TRUE(child->wait().has_value());
  const fs::path stale = parent_ / ("cordon-" + std::to_string(dead) + "-1");
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0);
  auto live = Cgroup2::create(parent_);
  ASSERT_TRUE(live.has_value());

  auto removed = sweep_stale_cgroups(parent_);
  ASSERT_TRUE(removed.has_value());
  EXPECT_GE(*removed, 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live->path()));  // ours: we hold its lock
}

// Issue #40, item 6: ownership is the lock its owner holds, never whether the pid in the
// name can be read in /proc. An owner in another PID namespace sharing this cgroupfs (or
// behind hidepid, or a sweeper out of fds) names its groups with a pid that reads as dead
// here; while it holds its lock, its groups stay. Once the lock goes, the group is swept.
TEST_F(Cgroup2Live, SweepKeepsALockedGroupWhoseOwnerPidReadsDead) {
  const pid_t unreadable = testing::dead_pid();
  ASSERT_FALSE(pid_alive(unreadable));
  const fs::path group = parent_ / ("cordon-" + std::to_string(unreadable) + "-1");
  ASSERT_EQ(::mkdir(group.c_str(), 0755), 0);
  auto owner_lock = try_lock_dir(group);
  ASSERT_TRUE(owner_lock.has_value() && owner_lock->valid());

  auto removed = sweep_stale_cgroups(parent_);
  ASSERT_TRUE(removed.has_value());
  EXPECT_TRUE(fs::exists(group)) << "a live owner's group was swept";

  owner_lock->reset();  // the owner dies: its lock goes with its last fd
  removed = sweep_stale_cgroups(parent_);
  ASSERT_TRUE(removed.has_value());
  EXPECT_FALSE(fs::exists(group));
  ::rmdir(group.c_str());
}

// cordon's own leaf on a delegated v2 parent ("cordon-<pid>-0", where cordon itself runs)
// lies beside the run groups: made locked, it is never swept while its owner lives.
TEST_F(Cgroup2Live, SweepKeepsALockedLeaf) {
  const fs::path leaf = parent_ / ("cordon-" + std::to_string(testing::dead_pid()) + "-0");
  auto lock = make_locked_cgroup_dir(leaf);
  ASSERT_TRUE(lock.has_value()) << lock.error().describe();
  EXPECT_FALSE(make_locked_cgroup_dir(leaf).has_value());  // held: not taken twice
  ASSERT_TRUE(sweep_stale_cgroups(parent_).has_value());
  EXPECT_TRUE(fs::exists(leaf));
  lock->reset();
  ASSERT_TRUE(sweep_stale_cgroups(parent_).has_value());
  EXPECT_FALSE(fs::exists(leaf));
  ::rmdir(leaf.c_str());
}

// One naming scheme with one counter for every per-run cgroup of the process (issue #11,
// item 15): a name that is taken already (here: planted as a dead namesake's leftover)
// is skipped, never failed on and never taken over.
TEST_F(Cgroup2Live, CreateSkipsANameThatIsTakenAndSharesTheProcessCounter) {
  const std::string last = next_owned_name("cordon-");
  const std::string prefix = owned_prefix("cordon-");
  ASSERT_TRUE(last.starts_with(prefix));
  const std::uint64_t n = std::stoull(last.substr(prefix.size()));
  const fs::path taken = parent_ / (prefix + std::to_string(n + 1));
  ASSERT_EQ(::mkdir(taken.c_str(), 0755), 0);
  auto cg = Cgroup2::create(parent_);
  const bool created = cg.has_value();
  EXPECT_TRUE(created) << (created ? "" : cg.error().describe());
  if (created) {
    EXPECT_EQ(cg->path(), parent_ / (prefix + std::to_string(n + 2)));
  }
  EXPECT_TRUE(fs::exists(taken));
  ::rmdir(taken.c_str());
  // The next name, whoever makes it, continues the same sequence.
  EXPECT_EQ(next_owned_name("cordon-"), prefix + std::to_string(n + 3));
}

}  // namespace
}  // namespace cordon::proc
