// The container backend's per-instance locks and the sweep of dead instances
// (backends/container/instance.h), without a runtime: what crash safety rests on when
// cordon is SIGKILLed and its pid is later recycled (tests/crash_test.py drives the whole).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "instance.h"
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

}  // namespace
}  // namespace cordon::oci
