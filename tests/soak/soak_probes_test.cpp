// The soak's probes (tests/soak/probes.h) see each kind of object a leak would leave: an
// fd, a thread, a child, a cgroup, a run dir, a lock, a mount. Without this a probe that
// never counts anything would make every soak look flat.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "kernel_features.h"
#include "probes.h"
#include "soak.h"

namespace cordon::soak {
namespace {

namespace fs = std::filesystem;

std::int64_t count(const Sample& s, const std::string& column) {
  for (const auto& [name, value] : s.counts) {
    if (name == column) return value;
  }
  ADD_FAILURE() << "no column " << column;
  return -1;
}

// This process's path in the v1 memory hierarchy ("" when there is none).
std::string memory_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    std::stringstream controllers(line.substr(a + 1, b - a - 1));
    for (std::string c; std::getline(controllers, c, ',');) {
      if (c == "memory") return line.substr(b + 1);
    }
  }
  return "";
}

const std::string kPid = std::to_string(::getpid());

TEST(SoakProbes, SeeAnFdAThreadAndAChild) {
  const Sample before = take_sample();
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  bool stop = false;
  std::thread thread([&] {
    while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) ::usleep(1000);
  });
  const Sample during = take_sample();
  __atomic_store_n(&stop, true, __ATOMIC_SEQ_CST);
  thread.join();
  ::kill(child, SIGKILL);
  // Reaped only after a sample: a zombie child still counts among the children. WNOWAIT
  // waits until it is one without reaping it (a fixed 100 ms sleep once was not enough on
  // a loaded machine: the child still ran and counted as a sandbox process).
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  const Sample zombie = take_sample();
  ::waitpid(child, nullptr, 0);
  ::close(fd);
  EXPECT_EQ(count(during, "fds"), count(before, "fds") + 1);
  EXPECT_EQ(count(during, "threads"), count(before, "threads") + 1);
  EXPECT_EQ(count(during, "children"), count(before, "children") + 1);
  EXPECT_EQ(count(during, "sandbox"), count(before, "sandbox") + 1);
  EXPECT_EQ(count(zombie, "children"), count(before, "children") + 1);
  EXPECT_EQ(count(zombie, "sandbox"), count(before, "sandbox"));
  EXPECT_TRUE(take_sample().same_counts(before));
}

TEST(SoakProbes, SeeARunDirAndALock) {
  const Sample before = take_sample();
  const fs::path dir = fs::path("/tmp") / ("cordon-run-" + kPid + "-probe");
  fs::create_directories(dir / "a");
  const int fd = ::open((dir / "lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const Sample during = take_sample();
  ::close(fd);
  fs::remove_all(dir);
  EXPECT_EQ(count(during, "dirs"), count(before, "dirs") + 3);  // the dir, a, lock
  EXPECT_EQ(count(during, "locks"), count(before, "locks") + 1);
  EXPECT_TRUE(take_sample().same_counts(before));
}

TEST(SoakProbes, SeeACgroupAndAMount) {
  if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("making cgroups and mounts needs root");
  if (const std::string why = enter_private_mount_namespace(); !why.empty()) {
    CORDON_SKIP_OR_FAIL(why);
  }
  const std::string own = memory_cgroup();
  if (own.empty()) GTEST_SKIP() << "no v1 memory hierarchy here";
  const Sample before = take_sample();
  const fs::path group = fs::path("/sys/fs/cgroup/memory") / fs::path(own).relative_path() /
                         ("cordon-" + kPid + "-probe");
  ASSERT_TRUE(fs::create_directory(group)) << group;
  const fs::path point = fs::path("/tmp") / ("cordon-run-" + kPid + "-mnt");
  fs::create_directory(point);
  ASSERT_EQ(::mount("probe", point.c_str(), "tmpfs", 0, "size=64k"), 0);
  const Sample during = take_sample();
  ::umount2(point.c_str(), MNT_DETACH);
  fs::remove(point);
  ::rmdir(group.c_str());
  EXPECT_EQ(count(during, "cg:memory"), count(before, "cg:memory") + 1);
  EXPECT_EQ(count(during, "mounts"), count(before, "mounts") + 1);
  EXPECT_EQ(count(during, "cordon_mnt"), count(before, "cordon_mnt") + 1);
  EXPECT_TRUE(take_sample().same_counts(before));
}

}  // namespace
}  // namespace cordon::soak
