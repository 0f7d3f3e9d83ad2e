#include "cordon/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/sha256.h"
#include "cordon/unique_fd.h"
#include "cordon/units.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty() && part != ".") parts.push_back(part);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  return parts;
}

Status write_all(int fd, std::string_view bytes, const std::string& what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("write " + what);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// Opens (creating if needed) directory `name` below `parent`. O_NOFOLLOW on every
// component: a symlink planted where a directory is expected must not lead the write
// outside the working directory.
Result<UniqueFd> open_subdir(int parent, const std::string& name, const std::string& what) {
  if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail_errno("mkdir " + what);
  }
  UniqueFd fd(::openat(parent, name.c_str(), kDirFlags));
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return fail(ErrorCode::kInvalidArgument, what + " is not a directory (symlinks are refused)");
    }
    return fail_errno("open " + what);
  }
  return fd;
}

Status place_one(int root, const std::string& path, std::string_view bytes) {
  const auto parts = split_path(path);
  // validate() already refused these; checked again because this is where a bad path
  // would actually write outside the directory.
  if (parts.empty() || path.front() == '/' || path.find('\0') != std::string::npos ||
      std::ranges::find(parts, std::string_view("..")) != parts.end()) {
    return fail(ErrorCode::kInvalidArgument, "input file path '" + path + "' is not allowed");
  }
  UniqueFd dir;
  int cur = root;
  std::string so_far;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    so_far += std::string(parts[i]) + "/";
    auto sub = open_subdir(cur, std::string(parts[i]), so_far);
    if (!sub) return std::unexpected(sub.error());
    dir = std::move(*sub);
    cur = dir.get();
  }
  const std::string name(parts.back());
  // O_EXCL|O_NOFOLLOW: never write through an existing file or symlink.
  UniqueFd file(
      ::openat(cur, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) return fail_errno("create input file " + path);
  return write_all(file.get(), bytes, "input file " + path);
}

// Match rules (documented for users in request.h's artifact_globs): fnmatch with
// FNM_PATHNAME against the path relative to the working directory, so `*` never crosses
// a '/'; a pattern without '/' also matches the bare file name at any depth ("*.png"
// finds "out/plot.png"). No FNM_PERIOD: the workspace is the code's own, and "*.txt"
// is expected to find ".notes.txt" too.
bool matches(const std::vector<std::string>& globs, const std::string& rel,
             const std::string& name) {
  return std::ranges::any_of(globs, [&](const std::string& glob) {
    if (::fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) == 0) return true;
    return glob.find('/') == std::string::npos &&
           ::fnmatch(glob.c_str(), name.c_str(), FNM_PATHNAME) == 0;
  });
}

// The sandboxed code chose the shape of the tree: bound the walk so a deep or huge tree
// cannot exhaust fds or stall teardown.
constexpr std::size_t kMaxDepth = 64;
constexpr std::size_t kMaxEntries = 100'000;

struct Walk {
  const std::vector<std::string>& globs;
  std::uint64_t max_total;
  std::uint64_t total = 0;
  std::size_t entries = 0;
  CollectedArtifacts out;
};

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

std::string errno_text(int err) {
  char buf[128];
  return ::strerror_r(err, buf, sizeof buf);
}

void collect_file(Walk& walk, int dir, const std::string& name, const std::string& rel) {
  // O_NONBLOCK: if a FIFO took the file's place since lstat, open must not hang.
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    walk.out.skipped.push_back(rel + ": cannot open: " + errno_text(errno));
    return;
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    walk.out.skipped.push_back(rel + ": not a regular file");
    return;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > walk.max_total - walk.total) {
    walk.out.skipped.push_back(rel + ": " + format_size(size) +
                               " would exceed the artifact cap of " + format_size(walk.max_total));
    return;
  }
  std::string content(size, '\0');
  std::size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(fd.get(), content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      walk.out.skipped.push_back(rel + ": read failed: " + errno_text(errno));
      return;
    }
    if (n == 0) break;  // shrank since fstat: keep what is there
    got += static_cast<std::size_t>(n);
  }
  content.resize(got);
  walk.total += got;
  Artifact artifact;
  artifact.path = rel;
  artifact.size = got;
  artifact.sha256 = sha256_hex(content);
  artifact.content = std::move(content);
  walk.out.artifacts.push_back(std::move(artifact));
}

Result<std::vector<std::string>> list_dir(int dir) {
  const int dup = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return fail_errno("dup");
  DIR* stream = ::fdopendir(dup);  // owns `dup` from here on
  if (!stream) {
    const int err = errno;
    ::close(dup);
    return fail_errno("fdopendir", err);
  }
  std::vector<std::string> entries;
  errno = 0;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    entries.emplace_back(name);
  }
  const int err = errno;
  ::closedir(stream);
  if (err != 0) return fail_errno("readdir", err);
  // Sorted so the artifact list (and which files the cap skips) is deterministic.
  std::ranges::sort(entries);
  return entries;
}

void walk_dir(Walk& walk, int dir, const std::string& rel_dir, std::size_t depth) {
  auto entries = list_dir(dir);
  if (!entries) {
    walk.out.skipped.push_back((rel_dir.empty() ? "." : rel_dir) + ": " +
                               entries.error().describe());
    return;
  }
  for (const std::string& name : *entries) {
    if (++walk.entries > kMaxEntries) {
      walk.out.skipped.push_back(join(rel_dir, name) + ": walk stopped after " +
                                 std::to_string(kMaxEntries) + " entries");
      return;
    }
    const std::string rel = join(rel_dir, name);
    // lstat, not the d_type alone: some filesystems report DT_UNKNOWN, and the type must
    // be the link's own, never its target's.
    struct stat st{};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth + 1 > kMaxDepth) {
        walk.out.skipped.push_back(rel + ": deeper than " + std::to_string(kMaxDepth) +
                                   " levels, not searched");
        continue;
      }
      UniqueFd sub(::openat(dir, name.c_str(), kDirFlags));
      if (!sub) {
        walk.out.skipped.push_back(rel + ": cannot open directory: " + errno_text(errno));
        continue;
      }
      walk_dir(walk, sub.get(), rel, depth + 1);
      continue;
    }
    if (!matches(walk.globs, rel, name)) continue;
    if (S_ISLNK(st.st_mode)) {
      walk.out.skipped.push_back(rel + ": symlink, not followed");
    } else if (!S_ISREG(st.st_mode)) {
      walk.out.skipped.push_back(rel + ": not a regular file");
    } else {
      collect_file(walk, dir, name, rel);
    }
  }
}

}  // namespace

Status write_new_file(const fs::path& path, std::string_view bytes, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) return fail_errno("create " + path.string());
  if (auto st = write_all(fd.get(), bytes, path.string()); !st) return st;
  // umask may have narrowed the mode.
  if (::fchmod(fd.get(), mode) != 0) return fail_errno("chmod " + path.string());
  return {};
}

Status place_input_files(const fs::path& dir, const std::map<std::string, std::string>& files) {
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail_errno("open working directory " + dir.string());
  for (const auto& [path, bytes] : files) {
    if (auto status = place_one(root.get(), path, bytes); !status) return status;
  }
  return {};
}

Result<CollectedArtifacts> collect_artifacts(const fs::path& dir,
                                             const std::vector<std::string>& globs,
                                             std::uint64_t max_total_bytes) {
  if (globs.empty()) return CollectedArtifacts{};
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail_errno("open working directory " + dir.string());
  Walk walk{globs, max_total_bytes, 0, 0, {}};
  walk_dir(walk, root.get(), "", 0);
  return std::move(walk.out);
}

}  // namespace cordon
