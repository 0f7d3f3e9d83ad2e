#include "cordon/proc/cgroup2.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <system_error>
#include <utility>
#include <vector>

#include "cordon/lock_file.h"
#include "cordon/owner.h"
#include "cordon/proc/cgroup_fs.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/scope_exit.h"

namespace cordon::proc {
namespace fs = std::filesystem;

Result<fs::path> own_cgroup2_dir() {
  // The one reader of mountinfo and /proc/self/cgroup (cgroup_layout.h), any mount point.
  auto all = discover_cgroup_hierarchies("/");
  if (!all) return std::unexpected(all.error());
  if (const auto* v2 = find_v2_hierarchy(*all)) return v2->own_dir;
  return fail(ErrorCode::kUnavailable,
              "no cgroup2 filesystem shows our own cgroup v2 (none is mounted, or a cgroup "
              "namespace hides our place in it)");
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

namespace {

// `parent` opened and flocked with `how`, blocking: a sweep holds it exclusively only while
// it decides (no removal under it), a maker shared for one mkdir, open and flock.
Result<UniqueFd> lock_parent(const fs::path& parent, int how) {
  UniqueFd fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + parent.string());
  while (::flock(fd.get(), how) != 0) {
    if (errno != EINTR) return fail_errno("flock " + parent.string());
  }
  return fd;
}

}  // namespace

Result<RunCgroupDir> make_run_cgroup_dir(const fs::path& parent) {
  auto parent_lock = lock_parent(parent, LOCK_SH);
  if (!parent_lock) return std::unexpected(parent_lock.error());
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path dir = parent / next_owned_name("cordon-");
    if (::mkdir(dir.c_str(), 0755) != 0) {
      if (errno != EEXIST) return fail_errno("mkdir " + dir.string());
      continue;
    }
    auto lock = try_lock_dir(dir);
    if (lock && *lock) return RunCgroupDir{std::move(dir), std::move(*lock)};
    // Nobody else can hold a lock on a directory this new (a sweep would need the parent's
    // lock): a failure is ours (fd exhaustion). Without the lock it is not a run group.
    ::rmdir(dir.c_str());
    if (!lock) return std::unexpected(lock.error());
    return fail(ErrorCode::kInternal, "the lock of the new " + dir.string() + " was taken");
  }
  return fail(ErrorCode::kSystem, "no free cgroup name under " + parent.string());
}

Result<UniqueFd> make_locked_cgroup_dir(const fs::path& dir) {
  auto parent_lock = lock_parent(dir.parent_path(), LOCK_SH);
  if (!parent_lock) return std::unexpected(parent_lock.error());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail_errno("mkdir " + dir.string());
  auto lock = try_lock_dir(dir);
  if (!lock) return std::unexpected(lock.error());
  if (!*lock) return fail(ErrorCode::kUnavailable, dir.string() + " is locked by another process");
  return std::move(*lock);
}

bool cgroup_kill_expected(const fs::path& parent, std::string_view kernel_release) {
  if (::access((parent / "cgroup.kill").c_str(), F_OK) == 0) return true;
  if (::access((parent / "cgroup.type").c_str(), F_OK) == 0) return false;   // non-root, none
  if (::access((parent / "cgroup.procs").c_str(), F_OK) != 0) return false;  // not a cgroup
  unsigned major = 0;
  unsigned minor = 0;
  const char* p = kernel_release.data();
  const char* end = p + kernel_release.size();
  auto r = std::from_chars(p, end, major);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return false;
  if (std::from_chars(r.ptr + 1, end, minor).ec != std::errc()) return false;
  return major > 5 || (major == 5 && minor >= 14);
}

bool cgroup_kill_expected(const fs::path& parent) {
  struct utsname u{};
  if (::uname(&u) != 0) return false;
  return cgroup_kill_expected(parent, u.release);
}

Result<Cgroup2> Cgroup2::create(const fs::path& parent) {
  auto made = make_run_cgroup_dir(parent);
  if (!made) return std::unexpected(made.error());
  const fs::path dir = std::move(made->path);
  auto cg = adopt(dir);
  if (!cg) {
    ::rmdir(dir.c_str());
    return cg;
  }
  // The locked fd serves as the directory's fd: the lock lives exactly as long as the group.
  cg->dir_ = std::move(made->lock);
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
  const auto text = cgroupfs::read_small(events);
  if (!text) return std::unexpected(text.error());
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
  if (auto v = cgroupfs::cpu_usec(path_, /*v2=*/true)) return *v;
  return fail(ErrorCode::kSystem, "no usage_usec in " + (path_ / "cpu.stat").string());
}

Status Cgroup2::remove(Clock::time_point until) {
  if (path_.empty()) return {};
  procs_.reset();
  // dir_ (the owner's lock, for a group we made) stays open until the rmdir: a sweep that
  // sees the lock free meanwhile would remove the group under us.
  const ScopeExit unlock([this] { dir_.reset(); });
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

Result<int> sweep_unowned_cgroups(const fs::path& parent,
                                  const std::function<bool(const fs::path&)>& remove) {
  std::vector<RunCgroupDir> unowned;
  {
    // Exclusive while deciding, so no group is seen between its mkdir and its owner's flock.
    auto parent_lock = lock_parent(parent, LOCK_EX);
    if (!parent_lock) return std::unexpected(parent_lock.error());
    std::error_code ec;
    fs::directory_iterator it(parent, ec);
    if (ec) {
      return std::unexpected(Error{ErrorCode::kSystem, ec.value(), "list " + parent.string()});
    }
    for (const auto& entry : it) {
      if (!cgroup_owner_pid(entry.path().filename().string()) || !entry.is_directory(ec)) {
        continue;
      }
      auto lock = try_lock_dir(entry.path());
      if (lock && *lock) unowned.push_back(RunCgroupDir{entry.path(), std::move(*lock)});
    }
  }
  int removed = 0;
  for (const auto& group : unowned) {
    if (remove(group.path)) ++removed;
  }
  return removed;
}

Result<int> sweep_stale_cgroups(const fs::path& parent) {
  return sweep_unowned_cgroups(parent, [](const fs::path& dir) {
    auto cg = Cgroup2::adopt(dir);
    return cg && cg->remove(Cgroup2::Clock::now() + std::chrono::seconds(2)).has_value();
  });
}

}  // namespace cordon::proc
