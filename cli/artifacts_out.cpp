#include "artifacts_out.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "cordon/unique_fd.h"

namespace cordon::cli {
namespace {

constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

std::string sanitize_component(std::string_view component) {
  if (component == "..") return "__";
  std::string out(component);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  }
  return out;
}

// Opens (creating if needed) the directory `name` below `parent`. O_NOFOLLOW: a symlink
// planted in DIR (or raced in) must not lead the writes elsewhere.
Result<UniqueFd> open_subdir(int parent, const std::string& name, const std::string& shown) {
  if (::mkdirat(parent, name.c_str(), kDirMode) != 0 && errno != EEXIST) {
    return fail_errno("mkdir " + shown);
  }
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return fail_errno("open directory " + shown);
  return fd;
}

Status write_all(int fd, std::string_view bytes, const std::string& shown) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("write " + shown);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// Writes into a fresh temporary name (O_EXCL, so an existing entry of any kind is never
// opened) and renames it over the final name: rename replaces a symlink or hard link
// that stands there instead of writing through it.
Status write_file_at(int dir, const std::string& name, std::string_view bytes,
                     const std::string& shown) {
  // Not derived from `name`, which may already be NAME_MAX long.
  static unsigned counter = 0;
  const std::string temp =
      ".cordon-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  UniqueFd fd(
      ::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode));
  if (!fd) return fail_errno("create " + shown);
  if (Status written = write_all(fd.get(), bytes, shown); !written) {
    ::unlinkat(dir, temp.c_str(), /*flags=*/0);
    return written;
  }
  fd.reset();
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir, temp.c_str(), /*flags=*/0);
    return fail_errno("rename to " + shown, err);
  }
  return {};
}

}  // namespace

std::vector<std::string> sanitize_artifact_path(std::string_view path) {
  std::vector<std::string> components;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view component = path.substr(0, slash);
    if (!component.empty() && component != ".") {
      components.push_back(sanitize_component(component));
    }
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return components;
}

Result<std::vector<std::string>> write_artifacts(const std::filesystem::path& dir,
                                                 const std::vector<Artifact>& artifacts) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kSystem, "create " + dir.string() + ": " + ec.message());
  const UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail_errno("open " + dir.string());

  std::vector<std::string> written;
  for (const Artifact& artifact : artifacts) {
    const std::vector<std::string> components = sanitize_artifact_path(artifact.path);
    if (components.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "artifact path '" + artifact.path + "' has no usable name");
    }
    std::string relative;
    UniqueFd parent;  // invalid while still at `root`
    for (std::size_t i = 0; i + 1 < components.size(); ++i) {
      relative += components[i] + "/";
      Result<UniqueFd> sub =
          open_subdir(parent ? parent.get() : root.get(), components[i], (dir / relative).string());
      if (!sub) return std::unexpected(sub.error());
      parent = std::move(*sub);
    }
    relative += components.back();
    if (Status ok = write_file_at(parent ? parent.get() : root.get(), components.back(),
                                  artifact.content, (dir / relative).string());
        !ok) {
      return std::unexpected(ok.error());
    }
    written.push_back(relative);
  }
  return written;
}

}  // namespace cordon::cli
