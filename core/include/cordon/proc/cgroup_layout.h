// Where the cgroup hierarchies are and where this process sits in each of them.
//
// A v1 or hybrid host mounts one hierarchy per controller (or a few co-mounted, e.g.
// "cpu,cpuacct"), named by the mount's super options; a v2 host mounts one tree. Our own
// cgroup differs per hierarchy (/proc/self/cgroup, "N:controllers:path"), and limit
// groups go below it. Parsing is pure so it can be tested with recorded text;
// discover_cgroup_hierarchies() only reads the two /proc files.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"

namespace cordon::proc {

// One cgroup or cgroup2 line of /proc/self/mountinfo.
struct CgroupMountEntry {
  std::filesystem::path mount_point;
  std::string root;  // the cgroup mounted there ("/" unless a subtree bind)
  bool v2 = false;
  std::vector<std::string> options;  // v1 super options: "rw", "memory", "cpu", "cpuacct", ...
};
[[nodiscard]] std::vector<CgroupMountEntry> parse_cgroup_mounts(std::string_view mountinfo);

// One line of /proc/self/cgroup: "4:memory:/x" or "0::/y" (id 0, no controllers: v2).
struct ProcCgroupEntry {
  int id = 0;
  std::vector<std::string> controllers;  // "cpu,cpuacct" -> {"cpu", "cpuacct"}
  std::string path;
};
[[nodiscard]] std::vector<ProcCgroupEntry> parse_proc_cgroup(std::string_view text);

// A hierarchy we can place groups in: our own cgroup's directory in it.
struct CgroupHierarchy {
  bool v2 = false;
  std::vector<std::string> controllers;  // v1: the controllers of the hierarchy; v2: empty
  std::filesystem::path own_dir;         // <mount point>/<our path relative to the mount root>
};

// Pairs each /proc/self/cgroup line with a mount of that hierarchy under `cgroup_root`
// (a mount elsewhere, or one whose root does not contain our path, is skipped).
[[nodiscard]] std::vector<CgroupHierarchy> match_cgroup_hierarchies(
    const std::vector<CgroupMountEntry>& mounts, const std::vector<ProcCgroupEntry>& entries,
    const std::filesystem::path& cgroup_root);

// Reads /proc/self/mountinfo and /proc/self/cgroup and matches them.
[[nodiscard]] Result<std::vector<CgroupHierarchy>> discover_cgroup_hierarchies(
    const std::filesystem::path& cgroup_root);

// The v1 hierarchy that carries `controller`, or nullptr.
[[nodiscard]] const CgroupHierarchy* find_v1_hierarchy(const std::vector<CgroupHierarchy>& all,
                                                       std::string_view controller);
// The v2 hierarchy, or nullptr.
[[nodiscard]] const CgroupHierarchy* find_v2_hierarchy(const std::vector<CgroupHierarchy>& all);

}  // namespace cordon::proc
