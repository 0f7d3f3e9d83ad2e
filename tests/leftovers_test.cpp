// Nothing of cordon's outlives a batch of runs: no live process, no temp dir, no cgroup.
//
// Snapshots before and after a batch (normal exit, timeout, setsid orphan after a timeout
// and after a normal exit, cancel), on the cgroup path and the forced helper path:
//  - live (non-zombie) processes that are ours: any whose environment carries this test's
//    marker (inherited by every descendant of the code, even a setsid'd daemon), any in a
//    cordon-<our pid>-* cgroup, and any cordon-reaper whose parent is us. Zombies are
//    excluded on purpose: PID 1 on this machine kind does not reap, so killed orphans
//    reparented to it stay zombies forever; they run nothing and hold nothing.
//  - the run temp dirs: TMPDIR points at a private dir for this test, so other test
//    binaries that ctest runs in parallel cannot make /tmp/cordon-* differ;
//  - cordon-<our pid>-* cgroups under our own v2 cgroup.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "cordon/cancel.h"
#include "cordon/plugin_registry.h"
#include "cordon/proc/cgroup2.h"
#include "proc_test_support.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string marker() { return "CORDON_LEFTOVER_MARK=" + std::to_string(::getpid()); }

std::set<std::string> our_processes() {
  std::set<std::string> found;
  const std::string ours = "cordon-" + std::to_string(::getpid()) + "-";
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = testing::read_file("/proc/" + name + "/stat");
    if (!stat) continue;
    const auto close = stat->rfind(')');
    if (close == std::string::npos || close + 2 >= stat->size() || (*stat)[close + 2] == 'Z') {
      continue;
    }
    const std::string comm = stat->substr(stat->find('(') + 1, close - stat->find('(') - 1);
    const int ppid = std::atoi(stat->c_str() + close + 4);
    const auto environ = testing::read_file("/proc/" + name + "/environ").value_or("");
    const auto cgroup = testing::read_file("/proc/" + name + "/cgroup").value_or("");
    const bool marked =
        environ.find(marker() + '\0') != std::string::npos || environ.ends_with(marker());
    const bool in_our_cgroup = cgroup.find(ours) != std::string::npos;
    const bool our_helper = comm == "cordon-reaper" && ppid == ::getpid();
    if (marked || in_our_cgroup || our_helper) found.insert(name + " " + comm);
  }
  return found;
}

std::set<std::string> dir_entries(const fs::path& dir, const std::string& prefix) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename();
    if (name.starts_with(prefix)) out.insert(name);
  }
  return out;
}

struct Snapshot {
  std::set<std::string> processes, temp_dirs, cgroups;
  bool operator==(const Snapshot&) const = default;
};

class Leftovers : public ::testing::TestWithParam<bool> {
 protected:
  Snapshot snapshot() const {
    Snapshot s;
    s.processes = our_processes();
    s.temp_dirs = dir_entries(tmpdir_.path, "cordon-");
    if (cgroup_dir_) {
      s.cgroups = dir_entries(*cgroup_dir_, "cordon-" + std::to_string(::getpid()) + "-");
    }
    return s;
  }
  void SetUp() override {
    if (auto dir = proc::own_cgroup2_dir()) cgroup_dir_ = *dir;
  }
  testing::ScratchDir tmpdir_;
  std::optional<fs::path> cgroup_dir_;
};

TEST_P(Leftovers, NothingOutlivesABatchOfRuns) {
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmpdir_.path.c_str(), 1);
  if (GetParam()) ::setenv("CORDON_SUBPROCESS_FORCE_FALLBACK", "1", 1);

  PluginRegistry registry;
  registry.discover({CORDON_TEST_PLUGIN_DIR});
  auto backend = registry.create("subprocess");
  ::unsetenv("CORDON_SUBPROCESS_FORCE_FALLBACK");
  ASSERT_TRUE(backend.has_value()) << backend.error().describe();

  const Snapshot before = snapshot();
  testing::ScratchDir pids;
  auto request = [&](std::string code, milliseconds timeout) {
    RunRequest req;
    req.code = std::move(code);
    req.timeout = timeout;
    const std::string value = std::to_string(::getpid());
    req.env = {{"CORDON_LEFTOVER_MARK", value}};
    return req;
  };
  auto orphan = [&](const std::string& tag, const std::string& then) {
    const std::string p = pids.path + "/" + tag;
    return "setsid sh -c 'echo $$ > " + p + ".tmp; mv " + p + ".tmp " + p +
           "; exec sleep 30' & while [ ! -s " + p + " ]; do sleep 0.01; done; " + then;
  };

  EXPECT_EQ((*backend)->run(request("echo hi", seconds(10)), {}, nullptr).outcome, Outcome::kOk);
  EXPECT_EQ((*backend)->run(request("sleep 30 & sleep 30", milliseconds(300)), {}, nullptr).outcome,
            Outcome::kTimedOut);
  EXPECT_EQ(
      (*backend)->run(request(orphan("a", "sleep 30"), milliseconds(1500)), {}, nullptr).outcome,
      Outcome::kTimedOut);
  EXPECT_EQ((*backend)->run(request(orphan("b", "exit 3"), seconds(10)), {}, nullptr).outcome,
            Outcome::kFailed);
  {
    CancelSource source;
    std::thread canceller([&] {
      std::this_thread::sleep_for(milliseconds(200));
      source.cancel();
    });
    EXPECT_EQ((*backend)
                  ->run(request("sleep 30 & sleep 30", seconds(20)), source.token(), nullptr)
                  .outcome,
              Outcome::kCancelled);
    canceller.join();
  }
  // Kills are asynchronous only up to the zombie state, which the snapshot ignores; give
  // the kernel a moment anyway rather than flake.
  Snapshot after = snapshot();
  for (int i = 0; i < 100 && !(after == before); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    after = snapshot();
  }
  backend->reset();
  ::setenv("TMPDIR", saved.c_str(), 1);
  if (saved.empty()) ::unsetenv("TMPDIR");

  EXPECT_EQ(after.processes, before.processes);
  EXPECT_EQ(after.temp_dirs, before.temp_dirs);
  EXPECT_EQ(after.cgroups, before.cgroups);
  EXPECT_TRUE(after.temp_dirs.empty());
}

INSTANTIATE_TEST_SUITE_P(Paths, Leftovers, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Fallback" : "Cgroup"; });

}  // namespace
}  // namespace cordon
