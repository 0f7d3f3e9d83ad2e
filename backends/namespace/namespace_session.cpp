#include "namespace_session.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <utility>

namespace cordon::ns {
namespace {

constexpr auto kCloseBound = std::chrono::seconds(10);

// A relative path of '/'-separated names, none of them "", "." or "..".
bool plain_relative(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  std::size_t at = 0;
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string_view name = path.substr(at, end - at);
    if (name.empty() || name == "." || name == "..") return false;
    at = end + 1;
  }
  return path.find('\0') == std::string_view::npos;
}

// openat2 beneath `dir`, never through a link.
int open_beneath(int dir, const std::string& path, std::uint64_t flags, std::uint64_t mode = 0) {
  struct open_how how{};
  how.flags = flags | O_CLOEXEC | O_NOFOLLOW;
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof(how)));
}

std::unexpected<Error> path_error(std::string_view path) {
  return fail(ErrorCode::kInvalidArgument,
              "'" + std::string(path) + "' is not a path inside the session's workspace");
}

// This thread's filesystem ids as the sandbox's user while it lives: what it creates is
// that user's (root's uid is not mapped in the sandbox's user namespace, so the tmpfs would
// refuse root's new inodes with EOVERFLOW), and root's capabilities over files are dropped
// meanwhile (a non-zero fsuid clears them). setfsuid is per thread.
class AsSandboxUser {
 public:
  AsSandboxUser(uid_t uid, gid_t gid)
      : old_gid_(static_cast<gid_t>(::syscall(SYS_setfsgid, gid))),
        old_uid_(static_cast<uid_t>(::syscall(SYS_setfsuid, uid))) {}
  ~AsSandboxUser() {
    ::syscall(SYS_setfsuid, old_uid_);
    ::syscall(SYS_setfsgid, old_gid_);
  }
  AsSandboxUser(const AsSandboxUser&) = delete;
  AsSandboxUser& operator=(const AsSandboxUser&) = delete;

 private:
  gid_t old_gid_;
  uid_t old_uid_;
};

}  // namespace

NamespaceSession::NamespaceSession(NamespaceBackend& backend, std::unique_ptr<KeeperThread> keeper,
                                   BuiltSandbox sandbox, UniqueFd workspace, RunRequest base)
    : backend_(backend),
      keeper_(std::move(keeper)),
      sandbox_(std::move(sandbox)),
      workspace_(std::move(workspace)),
      base_(std::move(base)) {}

NamespaceSession::~NamespaceSession() {
  const auto until = std::chrono::steady_clock::now() + kCloseBound;
  (void)sandbox_.process.close_session(until);
  workspace_.reset();
  if (sandbox_.limits) (void)sandbox_.limits->remove(until);
}

RunResult NamespaceSession::run(const RunRequest& request, const CancelToken& cancel,
                                RunObserver* observer) {
  // Memory, processes and the workspace are the session's.
  RunRequest call = request;
  call.limits.memory_bytes = base_.limits.memory_bytes;
  call.limits.max_processes = base_.limits.max_processes;
  call.limits.scratch_bytes = base_.limits.scratch_bytes;
  ++calls_;
  return backend_.run_in_kernel(sandbox_, kernel_, call, cancel, observer);
}

Status NamespaceSession::reset() {
  if (!kernel_) return {};
  kernel_.reset();
  const auto now = std::chrono::steady_clock::now();
  bool asked = false;
  auto ended = SandboxKernel::end(sandbox_.process, now, now + kCloseBound, &asked);
  if (!ended) return fail(ended.error().code, "end the interpreter: " + ended.error().describe());
  return {};
}

SessionStats NamespaceSession::stats() {
  SessionStats s;
  s.calls = calls_;
  s.interpreter_alive = kernel_.has_value() && !kernel_->client().lost();
  if (sandbox_.limits) {
    if (auto usage = sandbox_.limits->usage(); usage && usage->memory_bytes) {
      s.memory_kb = static_cast<std::int64_t>(*usage->memory_bytes / 1024);
    }
  }
  struct statfs fs{};
  if (::fstatfs(workspace_.get(), &fs) == 0) {
    s.workspace_bytes = static_cast<std::int64_t>((fs.f_blocks - fs.f_bfree) * fs.f_bsize);
  }
  return s;
}

Result<std::vector<WorkspaceEntry>> NamespaceSession::list_files(std::string_view dir) {
  const bool top = dir.empty() || dir == ".";
  if (!top && !plain_relative(dir)) return path_error(dir);
  const UniqueFd fd(
      open_beneath(workspace_.get(), top ? "." : std::string(dir), O_RDONLY | O_DIRECTORY));
  if (!fd) return fail_errno("open " + std::string(dir) + " in the workspace");
  DIR* d = ::fdopendir(::dup(fd.get()));
  if (d == nullptr) return fail_errno("list the workspace");
  std::vector<WorkspaceEntry> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st{};
    if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    WorkspaceEntry entry;
    entry.path = top ? name : std::string(dir) + "/" + name;
    entry.directory = S_ISDIR(st.st_mode);
    // A link (or anything not a regular file) is listed with size 0, never followed.
    entry.size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  return out;
}

Result<std::string> NamespaceSession::read_file(std::string_view path, std::uint64_t max_bytes) {
  if (!plain_relative(path)) return path_error(path);
  // O_NONBLOCK: a FIFO the code planted must not block us (it is refused below).
  const UniqueFd fd(open_beneath(workspace_.get(), std::string(path), O_RDONLY | O_NONBLOCK));
  if (!fd) return fail_errno("open " + std::string(path) + " in the workspace");
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return fail_errno("stat " + std::string(path));
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument, std::string(path) + " is not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(path) + " is " + std::to_string(st.st_size) +
                    " bytes, over the limit of " + std::to_string(max_bytes));
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read " + std::string(path));
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      return fail(ErrorCode::kInvalidArgument, std::string(path) + " grew over the limit");
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Status NamespaceSession::write_file(std::string_view path, std::string_view bytes) {
  if (!plain_relative(path)) return path_error(path);
  const AsSandboxUser as_user(sandbox_.host.uid, sandbox_.host.gid);
  // Parents first, each made or opened beneath the one before.
  UniqueFd parent(::dup(workspace_.get()));
  if (!parent) return fail_errno("dup the workspace");
  std::size_t at = 0;
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', at)) {
    const std::string name(path.substr(at, slash - at));
    if (::mkdirat(parent.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
      return fail_errno("make " + std::string(path.substr(0, slash)));
    }
    UniqueFd next(open_beneath(parent.get(), name, O_PATH | O_DIRECTORY));
    if (!next) return fail_errno("open " + std::string(path.substr(0, slash)));
    parent = std::move(next);
    at = slash + 1;
  }
  const std::string leaf(path.substr(at));
  const UniqueFd fd(
      open_beneath(parent.get(), leaf, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644));
  if (!fd) return fail_errno("open " + std::string(path) + " in the workspace");
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument, std::string(path) + " is not a regular file");
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail_errno("write " + std::string(path), n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace cordon::ns
