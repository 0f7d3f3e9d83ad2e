// The code's process tree, contained one of two ways, behind one small interface so
// run() reads as a plain list of steps:
//  - a cgroup v2 of its own: the child joins it before exec; cgroup.kill ends the tree.
//  - the subreaper helper (cordon-reaper) when no cgroup can be had (or it is forced).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "cordon/error.h"
#include "cordon/proc/cgroup2.h"
#include "cordon/proc/reaper.h"
#include "cordon/proc/spawn.h"

namespace cordon::subprocess {

using Clock = std::chrono::steady_clock;

class ContainedTree {
 public:
  struct Finish {
    proc::ExitInfo main;          // the main process's wait status and rusage
    std::int64_t cpu_us = 0;      // the whole tree
    std::int64_t max_rss_kb = 0;  // the largest single process
  };

  // Spawns `code` inside `cgroup` (joined before exec), or under the helper when
  // `cgroup` is empty. `until` bounds the helper's start-up.
  [[nodiscard]] static Result<ContainedTree> start(proc::SpawnOptions code,
                                                   std::optional<proc::Cgroup2> cgroup,
                                                   const std::filesystem::path& helper,
                                                   Clock::time_point until);

  // Readable once the main process has ended (its pidfd, or the helper's).
  [[nodiscard]] int exit_fd() const;
  [[nodiscard]] std::string_view mechanism() const;

  // Kills every process of the tree now. Called at the deadline, on cancel, and after a
  // normal exit of the main process (nothing may outlive the run). A cgroup that is
  // already empty is left unkilled, so it can serve another run (see take_cgroup()).
  void kill();
  // After kill(): reaps the main process, waits for the tree to be gone and measures it.
  // Past `until` it gives up with kTimeout.
  [[nodiscard]] Result<Finish> finish(Clock::time_point until);
  // After a successful finish(): the cgroup, if it is empty and was never killed and so
  // may serve the next run; otherwise it is removed here (failing if that fails).
  // Empty on the helper path.
  [[nodiscard]] Result<std::optional<proc::Cgroup2>> take_cgroup(Clock::time_point until);

 private:
  std::optional<proc::Cgroup2> cgroup_;
  std::int64_t cpu_base_us_ = 0;               // cpu.stat before this run (reused cgroup)
  proc::ChildProcess main_;                    // cgroup path
  std::optional<proc::ReaperProcess> reaper_;  // helper path
};

}  // namespace cordon::subprocess
