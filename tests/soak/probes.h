// What the soak samples after every batch of runs: the host objects a run makes and a
// leak would leave behind, counted for this process only (other cordon processes may run
// beside the soak on a shared machine, so every count is filtered to this process's own
// objects: its descendants, its cgroups and dirs named with its pid, its locks).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cordon::soak {

// One sample: named counts in a fixed order (the report's columns), plus the RSS.
struct Sample {
  std::size_t runs = 0;  // runs finished when it was taken
  double elapsed_s = 0;  // since the soak started
  std::vector<std::pair<std::string, std::int64_t>> counts;
  std::int64_t rss_kb = 0;
  [[nodiscard]] bool same_counts(const Sample& other) const { return counts == other.counts; }
};

// Takes a sample now. Columns (docs/SOAK.md explains each):
//   fds        entries of /proc/self/fd
//   threads    entries of /proc/self/task
//   children   descendants of this process, zombies included (an unreaped child counts)
//   sandbox    live processes that are descendants or sit in a cgroup of this process's
//   uids       distinct host uids among those
//   mounts     lines of /proc/self/mountinfo (the soak runs in a mount namespace of its own,
//              so only its own mounts move this)
//   cordon_mnt mount points naming this process's objects, in its namespace and PID 1's
//   locks      file locks held by this process (/proc/locks): uid slots, instance locks
//   dirs       entries named for this process in cordon's run and state dirs
//              (/tmp, /dev/shm, $TMPDIR, /run/cordon, the container backend's
//              bundles, state and locks), to depth 3
//   cg:<h>     cgroup directories named for this process, per mounted hierarchy
[[nodiscard]] Sample take_sample();

}  // namespace cordon::soak
