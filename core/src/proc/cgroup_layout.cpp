#include "cordon/proc/cgroup_layout.h"

#include <algorithm>
#include <charconv>

#include "cordon/proc/cgroup_fs.h"
#include "cordon/text.h"

namespace cordon::proc {
namespace fs = std::filesystem;
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 &&
          std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// `path` equals `root` or lies below it (component-wise, so /sys/fs/cgroupX is not below
// /sys/fs/cgroup).
bool is_under(const fs::path& path, const fs::path& root) {
  if (root.empty()) return true;
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing slash of `root`
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

// <mount point>/<own path relative to the mount's root>, or empty if our cgroup is not
// visible through this mount (a bind of some other subtree).
fs::path own_dir_in(const CgroupMountEntry& mount, std::string_view own_path) {
  std::string_view root = mount.root;
  if (root.ends_with('/')) root.remove_suffix(1);
  if (!own_path.starts_with(root)) return {};
  std::string_view rest = own_path.substr(root.size());
  if (!rest.empty() && rest.front() != '/') return {};  // "/ab" is not below "/a"
  // "/../x": a cgroup namespace hides our real place; do not guess.
  if (rest.find("/..") != std::string_view::npos) return {};
  while (rest.starts_with('/')) rest.remove_prefix(1);
  return rest.empty() ? mount.mount_point : mount.mount_point / rest;
}

}  // namespace

std::vector<CgroupMountEntry> parse_cgroup_mounts(std::string_view mountinfo) {
  std::vector<CgroupMountEntry> out;
  for (const auto line : split(mountinfo, '\n')) {
    // "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:1 - cgroup cgroup rw,memory":
    // the number of optional fields before " - " varies; the fs type follows it.
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto after = split(line.substr(dash + 3), ' ');
    if (after.size() < 3 || (after[0] != "cgroup" && after[0] != "cgroup2")) continue;
    const auto before = split(line.substr(0, dash), ' ');
    if (before.size() < 5) continue;
    CgroupMountEntry entry;
    entry.root = unescape_mountinfo(before[3]);
    entry.mount_point = unescape_mountinfo(before[4]);
    entry.v2 = after[0] == "cgroup2";
    for (const auto opt : split(after[2], ',')) entry.options.emplace_back(opt);
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<ProcCgroupEntry> parse_proc_cgroup(std::string_view text) {
  std::vector<ProcCgroupEntry> out;
  for (const auto line : split(text, '\n')) {
    // The path may itself contain ':', so split only at the first two.
    const auto c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    const auto c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    ProcCgroupEntry entry;
    const auto id = line.substr(0, c1);
    if (std::from_chars(id.data(), id.data() + id.size(), entry.id).ec != std::errc()) continue;
    const auto controllers = line.substr(c1 + 1, c2 - c1 - 1);
    if (!controllers.empty()) {
      for (const auto c : split(controllers, ',')) entry.controllers.emplace_back(c);
    }
    entry.path = std::string(line.substr(c2 + 1));
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<CgroupHierarchy> match_cgroup_hierarchies(const std::vector<CgroupMountEntry>& mounts,
                                                      const std::vector<ProcCgroupEntry>& entries,
                                                      const fs::path& cgroup_root) {
  std::vector<CgroupHierarchy> out;
  for (const auto& entry : entries) {
    const bool v2 = entry.id == 0 && entry.controllers.empty();
    for (const auto& mount : mounts) {
      if (mount.v2 != v2 || !is_under(mount.mount_point, cgroup_root)) continue;
      // A v1 hierarchy is named by its controllers; its mount lists each of them among
      // the super options (with rw, clone_children, ... which we ignore).
      if (!v2 && !std::all_of(entry.controllers.begin(), entry.controllers.end(),
                              [&](const std::string& c) { return contains(mount.options, c); })) {
        continue;
      }
      auto dir = own_dir_in(mount, entry.path);
      if (dir.empty()) continue;
      out.push_back({v2, v2 ? std::vector<std::string>{} : entry.controllers, std::move(dir)});
      break;  // the first usable mount of a hierarchy is enough
    }
  }
  return out;
}

Result<std::vector<CgroupHierarchy>> discover_cgroup_hierarchies(const fs::path& cgroup_root) {
  auto mountinfo = cgroupfs::read("/proc/self/mountinfo");
  if (!mountinfo) return std::unexpected(mountinfo.error());
  auto cgroup = cgroupfs::read("/proc/self/cgroup");
  if (!cgroup) return std::unexpected(cgroup.error());
  return match_cgroup_hierarchies(parse_cgroup_mounts(*mountinfo), parse_proc_cgroup(*cgroup),
                                  cgroup_root);
}

const CgroupHierarchy* find_v1_hierarchy(const std::vector<CgroupHierarchy>& all,
                                         std::string_view controller) {
  for (const auto& h : all) {
    if (!h.v2 && contains(h.controllers, controller)) return &h;
  }
  return nullptr;
}

const CgroupHierarchy* find_v2_hierarchy(const std::vector<CgroupHierarchy>& all) {
  for (const auto& h : all) {
    if (h.v2) return &h;
  }
  return nullptr;
}

}  // namespace cordon::proc
