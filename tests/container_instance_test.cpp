// The container backend's per-instance locks and the sweep of dead instances
// (backends/container/instance.h), without a runtime: what crash safety rests on when
// cordon is SIGKILLed and its pid is later recycled (tests/crash_test.py drives the whole).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/proc/spawn.h"
#include "instance.h"
#include "kernel_features.h"
#include "proc_test_support.h"

namespace cordon::oci {
namespace {

namespace fs = std::filesystem;

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename());
  return out;
}

void make_bundle(const fs::path& dir) {
  fs::create_directories(dir / "etc");
  std::ofstream(dir / "etc" / "passwd") << "x\n";
}

// A runtime that is never there: destroy() fails, which the sweep ignores (the
// container of a name that is only a directory does not exist).
RuntimeCli no_runtime(const fs::path& dir) { return {"/bin/false", dir / "state"}; }

TEST(ContainerInstance, ADeadNamesakesLockIsNeverTaken) {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path;
  // A killed cordon that had our pid (pids recycle) left locks and a bundle under the
  // names this process would take next.
  fs::create_directories(dir / "locks");
  std::set<std::string> planted;
  for (int k = 0; k < 64; ++k) {
    const std::string id = std::to_string(::getpid()) + "-" + std::to_string(k);
    std::ofstream(dir / "locks" / (id + ".lock")).flush();
    planted.insert(id);
  }
  make_bundle(dir / "bundles" / (std::to_string(::getpid()) + "-0-rootfs"));

  auto instance = Instance::acquire(dir);
  ASSERT_TRUE(instance) << instance.error().describe();
  EXPECT_FALSE(planted.contains(instance->id())) << instance->id();
  // The namesakes' files stay for the sweep: still there, still unlocked.
  for (const std::string& id : planted) EXPECT_TRUE(fs::exists(dir / "locks" / (id + ".lock")));
  const Result<int> swept = sweep_dead_instances(dir, no_runtime(dir), {});
  ASSERT_TRUE(swept);
  EXPECT_EQ(names(dir / "locks"), std::set<std::string>{instance->id() + ".lock"});
  EXPECT_TRUE(names(dir / "bundles").empty());
}

TEST(ContainerInstance, BundlesWithoutALockAreSweptAndALiveInstancesAreNot) {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path;
  auto live = Instance::acquire(dir);
  ASSERT_TRUE(live) << live.error().describe();
  make_bundle(dir / "bundles" / (live->id() + "-rootfs"));
  make_bundle(dir / "bundles" / (live->id() + "-3"));
  // A dead cordon's bundles whose lock file is already gone (pid above any pid_max).
  make_bundle(dir / "bundles" / "4194304-0-rootfs");
  make_bundle(dir / "bundles" / "4194304-0-7");
  // Not a bundle name of ours: left alone.
  make_bundle(dir / "bundles" / "notes");

  const Result<int> swept = sweep_dead_instances(dir, no_runtime(dir), {});
  ASSERT_TRUE(swept);
  EXPECT_EQ(names(dir / "bundles"),
            (std::set<std::string>{live->id() + "-rootfs", live->id() + "-3", "notes"}));
  EXPECT_EQ(names(dir / "locks"), std::set<std::string>{live->id() + ".lock"});
}

TEST(ContainerInstance, TwoInstancesOfOneProcessKeepTheirLocks) {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path;
  // Two instances of one process: each takes its own lock, and neither sweeps the other.
  auto first = Instance::acquire(dir);
  auto second = Instance::acquire(dir);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->id(), second->id());
  ASSERT_TRUE(sweep_dead_instances(dir, no_runtime(dir), {}));
  EXPECT_EQ(names(dir / "locks"),
            (std::set<std::string>{first->id() + ".lock", second->id() + ".lock"}));
}

// Reproduces the crash_kill_container leftovers (CI, stop 24): a cordon SIGKILLed after
// it made a container's cgroups and before it wrote the bundle left groups that no bundle
// named, and the bundle-driven sweep never found them. Plain directories stand in for the
// hierarchies here; the next test uses the host's.
TEST(ContainerInstance, CgroupsWithoutABundleAreSweptAndALiveInstancesAreNot) {
  testing::ScratchDir scratch;
  const fs::path dir = fs::path(scratch.path) / "oci";
  std::vector<proc::CgroupHierarchy> hierarchies;
  for (const char* controller : {"memory", "pids"}) {
    proc::CgroupHierarchy h;
    h.controllers = {controller};
    h.own_dir = fs::path(scratch.path) / controller;
    fs::create_directories(h.own_dir);
    hierarchies.push_back(h);
  }
  auto live = Instance::acquire(dir);
  ASSERT_TRUE(live) << live.error().describe();
  const std::string live_group = kContainerPrefix + live->id() + "-0";
  // Dead cordons (pids above any pid_max): one whose lock is still there, one without.
  fs::create_directories(dir / "locks");
  std::ofstream(dir / "locks" / "4194303-0.lock").flush();
  for (const auto& h : hierarchies) {
    for (const std::string& g :
         {live_group, std::string(kContainerPrefix) + "4194304-0-1",
          std::string(kContainerPrefix) + "4194303-0-0", std::string("unrelated")}) {
      fs::create_directories(h.own_dir / g);
    }
  }

  const Result<int> swept = sweep_dead_instances(dir, no_runtime(dir), hierarchies);
  ASSERT_TRUE(swept);
  EXPECT_EQ(*swept, 2);
  for (const auto& h : hierarchies) {
    EXPECT_EQ(names(h.own_dir), (std::set<std::string>{live_group, "unrelated"})) << h.own_dir;
  }
  // The dead instance's lock goes once everything of it went.
  EXPECT_EQ(names(dir / "locks"), std::set<std::string>{live->id() + ".lock"});
}

TEST(ContainerInstance, WhatADeadNamesakeLeftUnderOurOwnIdIsSwept) {
  testing::ScratchDir scratch;
  const fs::path dir = fs::path(scratch.path) / "oci";
  proc::CgroupHierarchy h;
  h.controllers = {"pids"};
  h.own_dir = fs::path(scratch.path) / "pids";
  auto inst = Instance::acquire(dir);
  ASSERT_TRUE(inst) << inst.error().describe();
  // A namesake (our pid, recycled) died without its lock and left a group and a bundle of
  // the very names this instance is about to use: its first container would collide.
  fs::create_directories(h.own_dir / (kContainerPrefix + inst->id() + "-0"));
  make_bundle(dir / "bundles" / (inst->id() + "-1"));
  // Without our id the sweep leaves them (our pid runs, our lock is held)...
  ASSERT_TRUE(sweep_dead_instances(dir, no_runtime(dir), {h}));
  EXPECT_FALSE(names(h.own_dir).empty());
  // ...with it, they go, and our lock stays.
  ASSERT_TRUE(sweep_dead_instances(dir, no_runtime(dir), {h}, {}, inst->id()));
  EXPECT_TRUE(names(h.own_dir).empty());
  EXPECT_TRUE(names(dir / "bundles").empty());
  EXPECT_EQ(names(dir / "locks"), std::set<std::string>{inst->id() + ".lock"});
}

// On the host's own cgroups (root): what still runs in a dead instance's groups is its
// code, and the sweep kills it before it removes the groups.
TEST(ContainerInstance, ProcessesLeftInADeadInstancesCgroupsAreKilled) {
  auto all = proc::discover_cgroup_hierarchies("/sys/fs/cgroup");
  const proc::CgroupHierarchy* pids = nullptr;
  if (all) {
    for (const auto& h : *all) {
      for (const auto& c : h.controllers) {
        if (c == "pids") pids = &h;
      }
      if (h.v2) pids = &h;
    }
  }
  const std::string group = std::string(kContainerPrefix) + "4194302-0-0";
  if (pids == nullptr || ::geteuid() != 0 || ::mkdir((pids->own_dir / group).c_str(), 0755) != 0) {
    CORDON_SKIP_OR_FAIL("no writable pids cgroup of our own (needs root and cgroups)");
  }
  const fs::path inner = pids->own_dir / group / "c";
  ASSERT_EQ(::mkdir(inner.c_str(), 0755), 0) << inner;
  proc::SpawnOptions so;
  so.path = "/bin/sleep";
  so.argv = {"sleep", "60"};
  auto child = proc::spawn(so);
  ASSERT_TRUE(child) << child.error().describe();
  ASSERT_TRUE(proc::cgroupfs::write(inner / "cgroup.procs", std::to_string(child->pid())));

  testing::ScratchDir scratch;
  const fs::path dir = fs::path(scratch.path) / "oci";
  auto live = Instance::acquire(dir);  // the runtime directory, as a backend has it
  ASSERT_TRUE(live);
  const Result<int> swept = sweep_dead_instances(dir, no_runtime(dir), {*pids});
  ASSERT_TRUE(swept);
  EXPECT_FALSE(fs::exists(pids->own_dir / group));
  auto exit = child->wait();
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal(), SIGKILL);
  ::rmdir(inner.c_str());  // only if the sweep failed
  ::rmdir((pids->own_dir / group).c_str());
}

}  // namespace
}  // namespace cordon::oci
