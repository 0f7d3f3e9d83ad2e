#include "cordon/proc/cgroup2.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "cordon/owner.h"
#include "cordon/proc/cgroup_fs.h"

namespace cordon::proc {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (std::size_t k = 1; k <= 3; ++k) {
        const char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::optional<fs::path> parse_cgroup2_mount(std::string_view mountinfo) {
  for (const auto line : split(mountinfo, '\n')) {
    // "36 25 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw": fields before " - "
    // vary in number (optional fields), the fs type is the first one after it.
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto after = split(line.substr(dash + 3), ' ');
    if (after.empty() || after[0] != "cgroup2") continue;
    const auto before = split(line.substr(0, dash), ' ');
    if (before.size() < 5 || before[3] != "/") continue;  // a bind of a subtree: skip
    return fs::path(unescape_mountinfo(before[4]));
  }
  return std::nullopt;
}

std::optional<std::string> parse_cgroup2_path(std::string_view proc_cgroup) {
  for (const auto line : split(proc_cgroup, '\n')) {
    if (line.starts_with("0::")) return std::string(line.substr(3));
  }
  return std::nullopt;
}

Result<fs::path> own_cgroup2_dir() {
  const auto mountinfo = read_small_file("/proc/self/mountinfo");
  if (!mountinfo) return fail_errno("read /proc/self/mountinfo");
  const auto mount = parse_cgroup2_mount(*mountinfo);
  if (!mount) return fail(ErrorCode::kUnavailable, "no cgroup2 filesystem is mounted");
  const auto cgroup = read_small_file("/proc/self/cgroup");
  if (!cgroup) return fail_errno("read /proc/self/cgroup");
  const auto own = parse_cgroup2_path(*cgroup);
  if (!own) return fail(ErrorCode::kUnavailable, "/proc/self/cgroup has no cgroup v2 entry");
  // "/../x" would mean a cgroup namespace hides our real place: do not guess.
  if (own->find("..") != std::string::npos || !own->starts_with("/")) {
    return fail(ErrorCode::kUnavailable, "own cgroup v2 path is outside this namespace: " + *own);
  }
  if (*own == "/") return *mount;  // mount / "" would leave a trailing slash
  return *mount / own->substr(1);
}

std::optional<pid_t> cgroup_owner_pid(std::string_view name) {
  if (!name.starts_with("cordon-")) return std::nullopt;
  name.remove_prefix(7);
  const auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 >= name.size()) return std::nullopt;
  pid_t pid = 0;
  const auto [p, ec] = std::from_chars(name.data(), name.data() + dash, pid);
  if (ec != std::errc() || p != name.data() + dash || pid <= 0) return std::nullopt;
  for (const char c : name.substr(dash + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return pid;
}

Result<Cgroup2> Cgroup2::adopt(const fs::path& dir) {
  Cgroup2 cg(dir);
  cg.dir_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  cg.procs_.reset(::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!cg.procs_) {
    const int err = errno;
    cg.path_.clear();  // not ours to remove
    return fail_errno("open " + (dir / "cgroup.procs").string(), err);
  }
  return cg;
}

Result<fs::path> make_run_cgroup_dir(const fs::path& parent) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path dir = parent / next_owned_name("cordon-");
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) return fail_errno("mkdir " + dir.string());
  }
  return fail(ErrorCode::kSystem, "no free cgroup name under " + parent.string());
}

Result<Cgroup2> Cgroup2::create(const fs::path& parent) {
  auto made = make_run_cgroup_dir(parent);
  if (!made) return std::unexpected(made.error());
  const fs::path dir = std::move(*made);
  auto cg = adopt(dir);
  if (!cg) {
    ::rmdir(dir.c_str());
    return cg;
  }
  // cgroup.kill is what makes a cgroup worth having here (Linux >= 5.14); checked on the
  // new child because the root cgroup has no cgroup.kill of its own.
  if (::access((dir / "cgroup.kill").c_str(), W_OK) != 0) {
    const int err = errno;
    cg->procs_.reset();
    ::rmdir(dir.c_str());
    cg->path_.clear();
    return std::unexpected(
        Error{ErrorCode::kUnavailable, err, "cgroup.kill is not available in " + dir.string()});
  }
  return cg;
}

Cgroup2::Cgroup2(Cgroup2&& other) noexcept
    : path_(std::exchange(other.path_, {})),
      ever_killed_(other.ever_killed_),
      dir_(std::move(other.dir_)),
      procs_(std::move(other.procs_)) {}

Cgroup2& Cgroup2::operator=(Cgroup2&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) (void)remove(Clock::now() + std::chrono::seconds(2));
    path_ = std::exchange(other.path_, {});
    ever_killed_ = other.ever_killed_;
    dir_ = std::move(other.dir_);
    procs_ = std::move(other.procs_);
  }
  return *this;
}

Cgroup2::~Cgroup2() {
  if (!path_.empty()) (void)remove(Clock::now() + std::chrono::seconds(2));
}

Status Cgroup2::kill() const {
  ever_killed_ = true;
  return cgroupfs::write(path_ / "cgroup.kill", "1");
}

Result<bool> Cgroup2::populated() const {
  const fs::path events = path_ / "cgroup.events";
  const auto text = read_small_file(events);
  if (!text) return fail_errno("read " + events.string());
  return text->find("populated 1") != std::string::npos;
}

Result<bool> Cgroup2::wait_empty(Clock::time_point until) const {
  const fs::path events = path_ / "cgroup.events";
  UniqueFd fd(::open(events.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + events.string());
  for (;;) {
    // Read first, then poll: kernfs signals POLLPRI on every change after the last read,
    // so a change between our read and the poll is not missed.
    char buf[256];
    const ssize_t n = ::pread(fd.get(), buf, sizeof(buf) - 1, 0);
    if (n < 0) return fail_errno("read " + events.string());
    const std::string_view text(buf, static_cast<std::size_t>(n));
    if (text.find("populated 0") != std::string_view::npos) return true;
    const auto now = Clock::now();
    if (now >= until) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    struct pollfd pfd{fd.get(), POLLPRI, 0};
    // Also wake every 50 ms: cheap insurance against a missed notification.
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left + 1, 50)));
    if (ready < 0 && errno != EINTR) return fail_errno("poll " + events.string());
  }
}

Result<std::int64_t> Cgroup2::cpu_usage_usec() const {
  const auto text = read_small_file(path_ / "cpu.stat");
  if (!text) return fail_errno("read " + (path_ / "cpu.stat").string());
  for (const auto line : split(*text, '\n')) {
    if (line.starts_with("usage_usec ")) {
      std::int64_t v = 0;
      const auto num = line.substr(11);
      if (std::from_chars(num.data(), num.data() + num.size(), v).ec == std::errc()) return v;
    }
  }
  return fail(ErrorCode::kSystem, "no usage_usec in " + (path_ / "cpu.stat").string());
}

Status Cgroup2::remove(Clock::time_point until) {
  if (path_.empty()) return {};
  procs_.reset();
  dir_.reset();
  Status status = kill();
  if (status || status.error().sys_errno == ENOENT) {
    auto empty = wait_empty(until);
    if (!empty) {
      status = std::unexpected(empty.error());
    } else if (!*empty) {
      status = fail(ErrorCode::kTimeout, "processes of " + path_.string() + " did not exit");
    }
  }
  // Try rmdir even after a failure: an empty cgroup goes, a busy one reports EBUSY.
  if (auto rm = cgroupfs::remove_tree(path_); !rm) {
    if (status) status = rm;
  } else {
    path_.clear();
    return {};
  }
  path_.clear();
  return status;
}

Result<int> sweep_stale_cgroups(const fs::path& parent) {
  std::error_code ec;
  int removed = 0;
  fs::directory_iterator it(parent, ec);
  if (ec) return std::unexpected(Error{ErrorCode::kSystem, ec.value(), "list " + parent.string()});
  for (const auto& entry : it) {
    const auto name = entry.path().filename().string();
    const auto owner = cgroup_owner_pid(name);
    if (!owner || !entry.is_directory(ec) || pid_alive(*owner)) continue;
    auto cg = Cgroup2::adopt(entry.path());
    if (!cg) continue;
    if (cg->remove(Cgroup2::Clock::now() + std::chrono::seconds(2))) ++removed;
  }
  return removed;
}

}  // namespace cordon::proc
