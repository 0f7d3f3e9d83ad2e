// Where cordon makes its cgroups on this host, for tests that look for what runs left: per
// hierarchy, its controllers ("" for the v2 tree, "memory", "cpu,cpuacct", ...) and the
// directory cordon's groups go in (below our own cgroup, or on a pure v2 host the parent
// proc/cgroup_delegation.h acquired).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cordon/proc/cgroup_delegation.h"
#include "cordon/proc/cgroup_layout.h"

namespace cordon::testing {

inline std::vector<std::pair<std::string, std::filesystem::path>> cordon_group_parents() {
  std::vector<std::pair<std::string, std::filesystem::path>> out;
  auto hierarchies = proc::discover_cgroup_hierarchies("/sys/fs/cgroup");
  if (!hierarchies) return out;
  for (const auto& h : *hierarchies) {
    std::string ctrl;
    for (const auto& c : h.controllers) ctrl += (ctrl.empty() ? "" : ",") + c;
    out.emplace_back(ctrl, proc::group_parent_dir(h));
  }
  return out;
}

// The leaf cordon itself may live in ("cordon-<pid>-0", once per process, not per run).
inline bool is_cordon_leaf(const std::string& name, pid_t owner) {
  return name == "cordon-" + std::to_string(owner) + "-0";
}

}  // namespace cordon::testing
