#include "cordon/owner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "cordon/temp_dir.h"
#include "proc_test_support.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

using testing::dead_pid;

TEST(Owner, PidAlive) {
  EXPECT_TRUE(pid_alive(::getpid()));
  EXPECT_FALSE(pid_alive(dead_pid()));
  EXPECT_FALSE(pid_alive(0));
  EXPECT_FALSE(pid_alive(-5));
}

TEST(Owner, ZombieCountsAsDead) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  // Not reaped yet: a zombie once it has exited.
  for (int i = 0; i < 200 && pid_alive(pid); ++i) ::usleep(5000);
  EXPECT_FALSE(pid_alive(pid));
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST(Owner, NamesRoundTrip) {
  const std::string name = owned_prefix("cordon-run-") + "abc123";
  EXPECT_EQ(owner_pid(name, "cordon-run-"), ::getpid());
  EXPECT_EQ(owner_pid("cordon-run-12-x", "cordon-run-"), 12);
  EXPECT_FALSE(owner_pid("cordon-run-x-1", "cordon-run-"));
  EXPECT_FALSE(owner_pid("cordon-run--1", "cordon-run-"));
  EXPECT_FALSE(owner_pid("cordon-run-12", "cordon-run-"));
  EXPECT_FALSE(owner_pid("other-12-x", "cordon-run-"));
}

TEST(Owner, SweepRemovesOnlyDeadOwnersDirs) {
  auto parent = TempDir::create("cordon-test-sweep-");
  ASSERT_TRUE(parent);
  const fs::path stale = parent->path() / ("cordon-run-" + std::to_string(dead_pid()) + "-AbCdEf");
  const fs::path live = parent->path() / (owned_prefix("cordon-run-") + "GhIjKl");
  const fs::path other = parent->path() / "unrelated-1-x";
  for (const auto& d : {stale, live, other}) ASSERT_EQ(::mkdir(d.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((stale / "work").c_str(), 0700), 0);

  auto removed = sweep_stale_temp_dirs("cordon-run-", parent->path());
  ASSERT_TRUE(removed) << removed.error().describe();
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

}  // namespace
}  // namespace cordon
