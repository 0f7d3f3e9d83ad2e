// The cgroups cordon owns for one container: a parent group `cordon-oci-<name>` in the
// memory and pids hierarchies (and cpuacct, for the CPU time), holding the memory and
// process limits, under which the runtime makes the container's own group
// (cgroupsPath "cordon-oci-<name>/c", relative: below cordon's own cgroup).
//
// Why a parent of cordon's own: the runtime deletes the container's group when the
// container ends (`runc run` does so before it returns), and on a v1 host the OOM-kill
// count lives only in the group of the killed process. With the limits on the parent, an
// OOM happens at the parent and is signalled through a v1 OOM eventfd registered on it
// before anything runs (v2: the parent's memory.events counts its subtree's kills); the
// pids limit's failure count and the memory and CPU peaks are read from the parent too.
// The runtime also leaves the parent folders it made in the other hierarchies: remove()
// takes them all.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/observer.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/unique_fd.h"

namespace cordon::oci {

struct ContainerStats {
  bool oom_killed = false;
  bool pids_limit_hit = false;
  std::optional<std::int64_t> memory_peak_kb;
  std::optional<std::int64_t> cpu_usec;
};

class ContainerCgroups {
 public:
  // Creates the parent groups with the limits (the init counts as one process, so the
  // pids limit is max_processes + 1) and arms the OOM eventfd.
  [[nodiscard]] static Result<ContainerCgroups> create(
      const std::vector<proc::CgroupHierarchy>& hierarchies, const std::string& group,
      std::uint64_t memory_bytes, std::uint64_t max_processes);

  // Why create() could not place both limits on this host ("" when it could), predicted
  // without changing anything: a probe's answer, so that `cordon backends` and `auto` do not
  // offer a backend every run of which would be refused.
  [[nodiscard]] static std::string unavailable_reason(
      const std::vector<proc::CgroupHierarchy>& hierarchies);

  ContainerCgroups() = default;
  ContainerCgroups(ContainerCgroups&&) noexcept = default;
  ContainerCgroups& operator=(ContainerCgroups&&) noexcept = default;
  ContainerCgroups(const ContainerCgroups&) = delete;
  ContainerCgroups& operator=(const ContainerCgroups&) = delete;
  ~ContainerCgroups() = default;  // removal is remove_container_cgroups(), by name

  // Makes the container's own group ("<group>/c") in every v1 pids hierarchy before the
  // runtime starts it. For runsc: it joins a group that exists as it is and never removes
  // it (gVisor's cgroup Install/Uninstall only own what they made), so the count of refused
  // forks, which v1 keeps only in the forking task's group, is still there to be read
  // after the sandbox ended; removal (remove_container_cgroups) takes it with ours.
  [[nodiscard]] Status make_own_pids_group() const;
  // The OCI cgroupsPath for the container: "<group>/c".
  [[nodiscard]] std::string cgroups_path() const { return group_ + "/c"; }
  // Whether the container's own group ("<group>/c") lists `pid` (as seen in our PID
  // namespace) in any hierarchy: runc's init and runsc's gofer and sandbox are there from
  // their start (init_listener.h's peer check).
  [[nodiscard]] bool holds(pid_t pid) const;
  // Waits until the container's own group ("<group>/c") holds no process (or is gone),
  // giving up at `until`.
  [[nodiscard]] Status wait_empty(std::chrono::steady_clock::time_point until) const;
  // Call when the run's order is sent: the CPU figures from here on count from this
  // point, so a container's start (runc's init before its exec; a gVisor sandbox's boot,
  // ~0.1-0.3 s of CPU; a pooled container's idle wait) is not charged to the code's run.
  void mark_run_start();
  // Call after the container ended, before removal.
  [[nodiscard]] ContainerStats stats() const;
  // What the container uses now (memory charged, CPU so far), read from the parent
  // groups while it runs, for live graphs; nullopt where no hierarchy measures either.
  [[nodiscard]] std::optional<ResourceSample> usage() const;

 private:
  // The CPU time the container's processes used so far, from the one hierarchy that
  // holds them all (cpu_hierarchy_); nullopt where none measures it.
  [[nodiscard]] std::optional<std::int64_t> cpu_usec_now() const;

  std::string group_;
  std::vector<proc::CgroupHierarchy> hierarchies_;
  UniqueFd oom_event_;              // v1: eventfd counting OOM events of the memory parent
  int cpu_hierarchy_ = -1;          // index into hierarchies_ of the one CPU is read from
  std::int64_t cpu_base_usec_ = 0;  // cpu_usec_now() at mark_run_start()
};

// Removes "<group>/c" and "<group>" in every hierarchy (empty groups only: rmdir). Safe
// to call for a group that does not exist.
void remove_container_cgroups(const std::vector<proc::CgroupHierarchy>& hierarchies,
                              const std::string& group);

}  // namespace cordon::oci
