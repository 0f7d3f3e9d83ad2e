// read_container_stats: a few small cgroup files.
#include "container_stats.h"

#include <fstream>
#include <sstream>

namespace cordon::oci {
namespace {

// The number after `key` in a "key value" file, or nullopt.
std::optional<std::int64_t> keyed(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string k; in >> k;) {
    std::int64_t v = 0;
    if (!(in >> v)) break;
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<std::int64_t> single(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::int64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

bool has(const proc::CgroupHierarchy& h, const std::string& controller) {
  for (const auto& c : h.controllers) {
    if (c == controller) return true;
  }
  return false;
}

}  // namespace

ContainerStats read_container_stats(const std::vector<proc::CgroupHierarchy>& hierarchies,
                                    const std::string& name) {
  ContainerStats s;
  for (const auto& h : hierarchies) {
    const auto dir = h.own_dir / name;
    if (h.v2) {
      if (auto n = keyed(dir / "memory.events", "oom_kill"); n && *n > 0) s.oom_killed = true;
      if (auto n = keyed(dir / "pids.events", "max"); n && *n > 0) s.pids_limit_hit = true;
      if (auto n = single(dir / "memory.peak")) s.memory_peak_kb = *n / 1024;
      if (auto n = keyed(dir / "cpu.stat", "usage_usec")) s.cpu_usec = *n;
      continue;
    }
    if (has(h, "memory")) {
      if (auto n = keyed(dir / "memory.oom_control", "oom_kill"); n && *n > 0) s.oom_killed = true;
      if (auto n = single(dir / "memory.max_usage_in_bytes")) s.memory_peak_kb = *n / 1024;
    }
    if (has(h, "pids")) {
      if (auto n = keyed(dir / "pids.events", "max"); n && *n > 0) s.pids_limit_hit = true;
    }
    if (has(h, "cpuacct")) {
      if (auto n = single(dir / "cpuacct.usage")) s.cpu_usec = *n / 1000;
    }
  }
  return s;
}

}  // namespace cordon::oci
