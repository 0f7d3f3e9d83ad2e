// The mount steps of the filesystem plan as syscalls (bubblewrap's SetupOp, nsjail's
// mnt.cc). Runs in the sandbox's init before pivot_root, with all capabilities of its
// own user namespace and none outside it.
#include "mount_apply.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>  // ST_* flags, which statfs().f_flags uses too
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

namespace cordon::ns {
namespace {

using policy::FsOp;

// Mount flags that the kernel locks on a mount a less privileged user namespace got from
// a more privileged one: a remount inside our user namespace that drops one of them fails
// with EPERM, so every remount carries those the mount already has.
unsigned long locked_flags(const char* path) {
  struct statfs st{};
  if (::statfs(path, &st) != 0) return 0;
  unsigned long f = 0;
  if (st.f_flags & ST_RDONLY) f |= MS_RDONLY;
  if (st.f_flags & ST_NOSUID) f |= MS_NOSUID;
  if (st.f_flags & ST_NODEV) f |= MS_NODEV;
  if (st.f_flags & ST_NOEXEC) f |= MS_NOEXEC;
  if (st.f_flags & ST_NOATIME) f |= MS_NOATIME;
  if (st.f_flags & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (st.f_flags & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

// MS_REMOUNT|MS_BIND changes only this mount's flags (not the filesystem's, which a user
// namespace could not change for a host filesystem anyway).
int remount(const char* target, unsigned long flags) {
  const unsigned long all = MS_REMOUNT | MS_BIND | flags | locked_flags(target);
  return ::mount(nullptr, target, nullptr, all, nullptr) == 0 ? 0 : errno;
}

// The MOUNT_ATTR_* bits of the MS_* flags a read-only bind asks for.
std::uint64_t mount_attrs(unsigned long ms_flags) {
  std::uint64_t attr = 0;
  if ((ms_flags & MS_RDONLY) != 0) attr |= MOUNT_ATTR_RDONLY;
  if ((ms_flags & MS_NOSUID) != 0) attr |= MOUNT_ATTR_NOSUID;
  if ((ms_flags & MS_NODEV) != 0) attr |= MOUNT_ATTR_NODEV;
  if ((ms_flags & MS_NOEXEC) != 0) attr |= MOUNT_ATTR_NOEXEC;
  return attr;
}

// Fallback for kernels without mount_setattr (< 5.12), as bubblewrap does it: every mount
// strictly below `target` in /proc/self/mountinfo gets its own bind remount. Streams the
// file through a fixed buffer (no allocation: we are the child of a threaded process).
int remount_submounts(const char* target, unsigned long flags) {
  const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buf[8192];
  char path[PATH_MAX];
  std::size_t have = 0;
  int err = 0;
  for (bool eof = false; !eof && err == 0;) {
    const ssize_t n = ::read(fd, buf + have, sizeof(buf) - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    eof = n == 0;
    have += static_cast<std::size_t>(n);
    std::size_t start = 0;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(buf + start, '\n', have - start));
      if (nl == nullptr && !eof) break;
      const std::size_t end = nl != nullptr ? static_cast<std::size_t>(nl - buf) : have;
      if (end > start &&
          mountinfo_mount_point(std::string_view(buf + start, end - start), path, sizeof(path)) &&
          path_strictly_under(path, target)) {
        // EACCES: a mount point we cannot even reach is one the code cannot reach either.
        if (const int e = remount(path, flags); e != 0 && e != EACCES) {
          err = e;
          break;
        }
      }
      if (nl == nullptr) break;
      start = end + 1;
    }
    if (start == 0 && have == sizeof(buf)) {
      err = ENAMETOOLONG;  // one line longer than the buffer
      break;
    }
    std::memmove(buf, buf + start, have - start);
    have -= start;
  }
  ::close(fd);
  return err;
}

// Makes every mount below `target` (a recursive bind brought them along) carry `flags`
// too: a host submount under a read-only bind must not stay writable.
int restrict_submounts(const char* target, unsigned long flags) {
  struct mount_attr attr{};
  attr.attr_set = mount_attrs(flags);
  if (::mount_setattr(AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof(attr)) == 0) return 0;
  if (errno != ENOSYS) return errno;
  return remount_submounts(target, flags);
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

bool exists(const char* path) {
  struct stat st{};
  return ::lstat(path, &st) == 0;
}

int write_all(int fd, const char* data, std::size_t len) {
  while (len > 0) {
    const ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    len -= static_cast<std::size_t>(n);
  }
  return 0;
}

int bind(const ChildMount& m) {
  if (m.optional && !exists(m.source)) return 0;
  // Not recursive: host submounts under a bound directory stay out. Inside a user
  // namespace the kernel refuses (EINVAL) a non-recursive bind of a tree with locked
  // submounts, since it would reveal what they cover; then bind them too.
  bool recursive = false;
  if (::mount(m.source, m.target, nullptr, MS_BIND, nullptr) != 0) {
    if (errno != EINVAL || ::mount(m.source, m.target, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return errno;
    }
    recursive = true;
  }
  // A bind ignores the flags passed with it; they take effect only through a remount.
  const unsigned long want = m.flags | (m.read_only ? MS_RDONLY : 0);
  if (want == 0) return 0;
  if (const int err = remount(m.target, want); err != 0) return err;
  // A remount changes one mount: the submounts a recursive bind brought get theirs too.
  return recursive ? restrict_submounts(m.target, want) : 0;
}

int mask(const ChildMount& m) {
  struct stat st{};
  if (::lstat(m.target, &st) != 0) return m.optional && errno == ENOENT ? 0 : errno;
  if (S_ISDIR(st.st_mode)) {
    // An empty read-only tmpfs over the directory.
    const unsigned long f = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    return ::mount("tmpfs", m.target, "tmpfs", f, "size=4096,mode=0555") == 0 ? 0 : errno;
  }
  // /dev/null over a file: reads as empty. The host's /dev/null is still reachable
  // (masking happens before pivot_root).
  return ::mount("/dev/null", m.target, nullptr, MS_BIND, nullptr) == 0 ? 0 : errno;
}

}  // namespace

bool mountinfo_mount_point(std::string_view line, char* out, std::size_t out_size) noexcept {
  // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": the fifth field.
  std::size_t pos = 0;
  for (int field = 0; field < 4; ++field) {
    pos = line.find(' ', pos);
    if (pos == std::string_view::npos) return false;
    ++pos;
  }
  const std::size_t end = std::min(line.find(' ', pos), line.size());
  // The kernel escapes space, tab, newline and backslash as \ooo.
  std::size_t o = 0;
  for (std::size_t i = pos; i < end; ++i) {
    char c = line[i];
    if (c == '\\' && i + 3 < end && is_octal(line[i + 1]) && is_octal(line[i + 2]) &&
        is_octal(line[i + 3])) {
      c = static_cast<char>((line[i + 1] - '0') * 64 + (line[i + 2] - '0') * 8 +
                            (line[i + 3] - '0'));
      i += 3;
    }
    if (o + 1 >= out_size) return false;
    out[o++] = c;
  }
  if (o == 0) return false;
  out[o] = '\0';
  return true;
}

bool path_strictly_under(const char* path, const char* dir) noexcept {
  const std::size_t n = std::strlen(dir);
  if (n == 1 && dir[0] == '/') return path[0] == '/' && path[1] != '\0';
  return std::strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

int PreopenedSources::open_sources(const ChildMount* mounts, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count && count_ < kMax; ++i) {
    const ChildMount& m = mounts[i];
    if (m.op != FsOp::kBind || m.source == nullptr) continue;
    Held& h = held_[count_++];
    h.step = i;
    h.fd = ::open(m.source, O_PATH | O_CLOEXEC);
    if (h.fd < 0) {
      if (m.optional) continue;
      failed_ = static_cast<int>(i);
      return errno;
    }
    // "/proc/self/fd/" and the number, by hand (no snprintf between clone and exec).
    constexpr char kPrefix[] = "/proc/self/fd/";
    std::memcpy(h.path, kPrefix, sizeof(kPrefix) - 1);
    char digits[12];
    int n = 0;
    for (auto v = static_cast<unsigned>(h.fd); n == 0 || v != 0; v /= 10) {
      digits[n++] = static_cast<char>('0' + v % 10);
    }
    std::size_t at = sizeof(kPrefix) - 1;
    while (n > 0) h.path[at++] = digits[--n];
    h.path[at] = '\0';
  }
  return 0;
}

const PreopenedSources::Held* PreopenedSources::find(std::size_t step) const noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (held_[i].step == step) return &held_[i];
  }
  return nullptr;
}

bool PreopenedSources::skip(std::size_t step) const noexcept {
  const Held* h = find(step);
  return h != nullptr && h->fd < 0;
}

const ChildMount& PreopenedSources::step(const ChildMount* mounts, std::size_t step) noexcept {
  const Held* h = find(step);
  if (h == nullptr || h->fd < 0) return mounts[step];
  current_ = mounts[step];
  current_.source = h->path;
  return current_;
}

int apply_mount(const ChildMount& m) noexcept {
  switch (m.op) {
    case FsOp::kMakePrivate:
      // Nothing mounted below may propagate to the host's namespace (the copied mounts
      // are shared peers of the host's), and nothing of the host's may appear in ours.
      return ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ? 0 : errno;
    case FsOp::kTmpfs:
      return ::mount("tmpfs", m.target, "tmpfs", m.flags | (m.read_only ? MS_RDONLY : 0), m.data) ==
                     0
                 ? 0
                 : errno;
    case FsOp::kBind:
      return bind(m);
    case FsOp::kProc:
      // We are PID 1 of the new PID namespace, whose owner is our user namespace: this
      // procfs shows the sandbox's processes only.
      return ::mount("proc", m.target, "proc", m.flags, nullptr) == 0 ? 0 : errno;
    case FsOp::kMkdir:
      if (::mkdir(m.target, m.mode) != 0 && errno != EEXIST) return errno;
      return 0;
    case FsOp::kMkfile: {
      const int fd = ::open(m.target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, m.mode);
      if (fd < 0) return errno;
      ::close(fd);
      return 0;
    }
    case FsOp::kWriteFile: {
      const int fd =
          ::open(m.target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, m.mode);
      if (fd < 0) return errno;
      const int err = write_all(fd, m.data, m.data_len);
      ::close(fd);
      return err;
    }
    case FsOp::kSymlink:
      return ::symlink(m.source, m.target) == 0 ? 0 : errno;
    case FsOp::kMask:
      return mask(m);
    case FsOp::kReadonly:
      if (!exists(m.target)) return m.optional ? 0 : ENOENT;
      if (::mount(m.target, m.target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
      if (const int err = remount(m.target, MS_RDONLY | m.flags); err != 0) return err;
      return restrict_submounts(m.target, MS_RDONLY | m.flags);
    case FsOp::kRemountReadonly:
      return remount(m.target, MS_RDONLY | m.flags);
    case FsOp::kPivotRoot:
      // pivot_root(".", "."): the old root ends up stacked on the new one, so no
      // directory for it is needed in the new root (pivot_root(2), "NOTES").
      if (::chdir(m.target) != 0) return errno;
      return ::syscall(SYS_pivot_root, ".", ".") == 0 ? 0 : errno;
    case FsOp::kDetachOldRoot:
      // Lazily: the host's mounts vanish from our namespace even if something still
      // holds them; nothing of the host's tree stays reachable.
      if (::umount2(".", MNT_DETACH) != 0) return errno;
      return ::chdir("/") == 0 ? 0 : errno;
  }
  return EINVAL;
}

}  // namespace cordon::ns
