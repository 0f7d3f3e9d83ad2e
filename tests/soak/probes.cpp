#include "probes.h"

#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "proc_test_support.h"

namespace cordon::soak {
namespace {

namespace fs = std::filesystem;

// "" when unreadable: a process may exit between listing /proc and reading its files.
std::string slurp(const fs::path& path) { return testing::read_file(path).value_or(""); }

std::int64_t count_entries(const fs::path& dir) {
  std::int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

std::int64_t count_lines(const std::string& text) {
  std::int64_t n = 0;
  for (const char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

// The whitespace-separated fields of a line (mountinfo, /proc/locks).
std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string field; in >> field;) out.push_back(field);
  return out;
}

// Field `i` of `fields`, "" past the end.
std::string field(const std::vector<std::string>& fields, std::size_t i) {
  return i < fields.size() ? fields[i] : std::string();
}

const std::string& pid_text() {
  static const std::string pid = std::to_string(::getpid());
  return pid;
}

// Whether a file or cgroup name was made for this process: cordon names its run dirs
// `cordon-run-<pid>-…`, its cgroups `cordon-<pid>-<n>`, and the container backend its
// bundles, state dirs, locks and cgroups `<pid>-<k>-<n>` / `cordon-oci-<pid>-<k>-<n>`.
bool ours(std::string_view name) {
  const std::string& pid = pid_text();
  if (name.starts_with(pid + "-")) return true;
  return name.find("cordon") != std::string_view::npos &&
         name.find("-" + pid + "-") != std::string_view::npos;
}

struct ProcInfo {
  pid_t ppid = 0;
  bool zombie = false;
};

std::map<pid_t, ProcInfo> process_table() {
  std::map<pid_t, ProcInfo> table;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp(it->path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) continue;
    table[std::stoi(name)] = {static_cast<pid_t>(std::atoi(stat.c_str() + close + 4)),
                              stat[close + 2] == 'Z'};
  }
  return table;
}

std::int64_t real_uid(pid_t pid) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("Uid:")) return std::atoll(line.c_str() + 4);
  }
  return -1;
}

// The processes: descendants (zombies too), and the live sandbox processes with their uids.
void processes(Sample& s) {
  const auto table = process_table();
  const pid_t self = ::getpid();
  std::map<pid_t, std::vector<pid_t>> kids;
  for (const auto& [pid, info] : table) kids[info.ppid].push_back(pid);
  std::set<pid_t> descendants;
  std::vector<pid_t> todo = {self};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (const pid_t k : kids[p]) {
      if (descendants.insert(k).second) todo.push_back(k);
    }
  }
  std::set<pid_t> sandbox;
  for (const pid_t p : descendants) {
    if (!table.at(p).zombie) sandbox.insert(p);
  }
  // A process that left the tree (reparented to PID 1) is still found by its cgroup.
  const std::string tag = "cordon-" + pid_text() + "-";
  const std::string oci_tag = "cordon-oci-" + pid_text() + "-";
  for (const auto& [pid, info] : table) {
    if (pid == self || info.zombie) continue;
    const std::string cg = slurp("/proc/" + std::to_string(pid) + "/cgroup");
    if (cg.find(tag) != std::string::npos || cg.find(oci_tag) != std::string::npos) {
      sandbox.insert(pid);
    }
  }
  std::set<std::int64_t> uids;
  for (const pid_t p : sandbox) uids.insert(real_uid(p));
  uids.erase(-1);
  s.counts.emplace_back("children", static_cast<std::int64_t>(descendants.size()));
  s.counts.emplace_back("sandbox", static_cast<std::int64_t>(sandbox.size()));
  s.counts.emplace_back("uids", static_cast<std::int64_t>(uids.size()));
}

// Mount points in `mountinfo` (field 5) that name this process's objects.
std::int64_t our_mounts(const std::string& mountinfo) {
  std::int64_t n = 0;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    // mountinfo: id, parent, major:minor, root, mount point, ...
    for (const auto& part : fs::path(field(fields_of(line), 4))) {
      if (ours(part.string())) {
        ++n;
        break;
      }
    }
  }
  return n;
}

// Entries named for this process directly in `dir`, each with everything below it.
std::int64_t our_entries(const fs::path& dir) {
  std::int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!ours(it->path().filename().string())) continue;
    ++n;
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    // Not into the mounts: a container's scratch tmpfs is the code's, its bundle is ours.
    auto sub = fs::recursive_directory_iterator(it->path(),
                                                fs::directory_options::skip_permission_denied, ec);
    for (; !ec && sub != fs::recursive_directory_iterator(); sub.increment(ec)) {
      ++n;
      if (sub.depth() >= 2) sub.disable_recursion_pending();
    }
  }
  return n;
}

std::int64_t our_dirs() {
  // Where cordon puts run dirs (default_run_parent(): $CORDON_RUN_DIR, $TMPDIR, /dev/shm,
  // /tmp) and, below one of those or /run, the container backend's state
  // (cordon-oci-<euid>/ or cordon-oci/: bundles, runtime state, instance locks).
  std::set<fs::path> run_parents = {"/tmp", "/dev/shm", "/run"};
  for (const char* var : {"TMPDIR", "CORDON_RUN_DIR"}) {
    if (const char* dir = std::getenv(var); dir != nullptr && dir[0] == '/') {
      run_parents.insert(dir);
    }
  }
  std::set<fs::path> parents = run_parents;
  parents.insert("/run/cordon");
  std::vector<fs::path> oci_dirs = {"/run/cordon-oci"};
  for (const auto& p : run_parents)
    oci_dirs.push_back(p / ("cordon-oci-" + std::to_string(::geteuid())));
  if (const char* rt = std::getenv("CORDON_RUNTIME_DIR"); rt != nullptr && rt[0] == '/') {
    parents.insert(rt);
    oci_dirs.push_back(fs::path(rt) / "oci");
  }
  for (const auto& oci : oci_dirs) {
    for (const char* sub : {"bundles", "state", "locks"}) parents.insert(oci / sub);
  }
  std::int64_t n = 0;
  for (const auto& p : parents) n += our_entries(p);
  return n;
}

// flock/POSIX/OFD locks whose holder is this process: /proc/locks field 5 is the pid.
std::int64_t our_locks() {
  std::int64_t n = 0;
  std::istringstream in(slurp("/proc/locks"));
  std::string line;
  while (std::getline(in, line)) {
    // "1: FLOCK ADVISORY WRITE <pid> ..."; a blocked waiter's line has "->" after "1:".
    const std::vector<std::string> f = fields_of(line);
    if (field(f, field(f, 1) == "->" ? 5 : 4) == pid_text()) ++n;
  }
  return n;
}

std::int64_t cgroup_dirs_in(const fs::path& dir, int depth) {
  if (depth > 10) return 0;
  std::int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    if (ours(it->path().filename().string())) {
      // Everything below a group of ours is ours: count it whole.
      ++n;
      auto sub = fs::recursive_directory_iterator(it->path(), ec);
      for (; !ec && sub != fs::recursive_directory_iterator(); sub.increment(ec)) {
        if (sub->is_directory(ec) && !sub->is_symlink(ec)) ++n;
      }
    } else {
      n += cgroup_dirs_in(it->path(), depth + 1);
    }
  }
  return n;
}

// Every mounted cgroup hierarchy (v1 by its controllers, v2 as "v2"), by mount point.
std::vector<std::pair<std::string, fs::path>> hierarchies(const std::string& mountinfo) {
  std::vector<std::pair<std::string, fs::path>> out;
  std::set<std::string> seen;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::string point = field(fields_of(line.substr(0, dash)), 4);
    // After " - ": file system type, source, super options.
    const std::vector<std::string> tail = fields_of(line.substr(dash + 3));
    const std::string type = field(tail, 0);
    const std::string options = field(tail, 2);
    std::string name;
    if (type == "cgroup2") {
      name = "v2";
    } else if (type == "cgroup") {
      // The controllers among the super options (rw,memory / rw,cpu / rw,name=systemd).
      std::istringstream opts(options);
      std::string opt;
      while (std::getline(opts, opt, ',')) {
        if (opt == "rw" || opt == "ro" || opt.starts_with("clone_children") ||
            opt.starts_with("release_agent") || opt == "noprefix" || opt == "xattr") {
          continue;
        }
        name += (name.empty() ? "" : "+") + opt;
      }
    } else {
      continue;
    }
    if (seen.insert(name).second) out.emplace_back(name, point);
  }
  return out;
}

}  // namespace

Sample take_sample() {
  Sample s;
  s.counts.emplace_back("fds", count_entries("/proc/self/fd"));
  s.counts.emplace_back("threads", count_entries("/proc/self/task"));
  processes(s);
  const std::string mountinfo = slurp("/proc/self/mountinfo");
  s.counts.emplace_back("mounts", count_lines(mountinfo));
  s.counts.emplace_back("cordon_mnt",
                        our_mounts(slurp("/proc/1/mountinfo")) + our_mounts(mountinfo));
  s.counts.emplace_back("locks", our_locks());
  s.counts.emplace_back("dirs", our_dirs());
  for (const auto& [name, point] : hierarchies(mountinfo)) {
    s.counts.emplace_back("cg:" + name, cgroup_dirs_in(point, 0));
  }
  s.rss_kb = testing::status_kb("VmRSS:");
  return s;
}

}  // namespace cordon::soak
