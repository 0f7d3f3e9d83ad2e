// What the container's cgroups say about its run, read before the runtime deletes them:
// on a v1 host the OOM-kill count lives only in the container's own memory cgroup
// (a parent shows 0), and `delete` removes that cgroup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/proc/cgroup_layout.h"

namespace cordon::oci {

struct ContainerStats {
  bool oom_killed = false;
  bool pids_limit_hit = false;
  std::optional<std::int64_t> memory_peak_kb;
  std::optional<std::int64_t> cpu_usec;
};

// Reads <own cgroup>/<name>/ in each hierarchy (v1: memory, pids, cpuacct; v2 files
// where the host is pure v2).
[[nodiscard]] ContainerStats read_container_stats(
    const std::vector<proc::CgroupHierarchy>& hierarchies, const std::string& name);

}  // namespace cordon::oci
