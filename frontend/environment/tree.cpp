// The environment tree's manifest and digest, and the store's copy of a tree. Both walk
// the tree the same way (tree.h), so a copy hashes as its source did.
#include "frontend/environment/tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <ranges>

#include "cordon/sha256.h"
#include "cordon/text.h"
#include "cordon/unique_fd.h"
#include "frontend/environment.h"

namespace cordon::environment {
namespace {

namespace fs = std::filesystem;

Result<std::string> file_sha256(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open " + path.string());
  Sha256 hash;
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read " + path.string());
    if (n == 0) break;
    hash.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  return hash.finish_hex();
}

Status walk_dir(const fs::path& root, const std::string& rel, const TreeVisitor& visit) {
  const fs::path dir = rel.empty() ? root : root / rel;
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return fail(ErrorCode::kSystem, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());  // bytewise: the manifest's order
  for (const std::string& name : names) {
    const std::string child = rel.empty() ? name : rel + "/" + name;
    const fs::path host = root / child;
    struct stat st{};
    if (::lstat(host.c_str(), &st) != 0) return fail_errno("lstat " + host.string());
    TreeEntry e{.path = child, .mode = static_cast<std::uint32_t>(st.st_mode & 07777)};
    if (S_ISDIR(st.st_mode)) {
      e.type = TreeEntry::Type::kDirectory;
    } else if (S_ISREG(st.st_mode)) {
      e.type = TreeEntry::Type::kFile;
    } else if (S_ISLNK(st.st_mode)) {
      e.type = TreeEntry::Type::kSymlink;
      std::array<char, PATH_MAX> buf{};
      const ssize_t n = ::readlink(host.c_str(), buf.data(), buf.size() - 1);
      if (n < 0) return fail_errno("readlink " + host.string());
      e.link_target.assign(buf.data(), static_cast<std::size_t>(n));
    } else {
      continue;  // devices, fifos, sockets: never shown to a sandbox (environment.h)
    }
    if (Status s = visit(e); !s) return s;
    if (e.type == TreeEntry::Type::kDirectory) {
      if (Status s = walk_dir(root, child, visit); !s) return s;
    }
  }
  return {};
}

}  // namespace

Status walk_tree(const fs::path& root, const TreeVisitor& visit) {
  struct stat st{};
  if (::lstat(root.c_str(), &st) != 0) return fail_errno("environment " + root.string());
  if (!S_ISDIR(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument,
                "environment " + root.string() + " is not a directory");
  }
  return walk_dir(root, "", visit);
}

Result<std::string> tree_digest(const fs::path& root) {
  Sha256 manifest;
  // One record per entry, fields ended by NUL (no path holds one): type, octal mode, the
  // file's sha256 or the link's target, the path relative to the root.
  const auto add = [&](std::string_view field) {
    manifest.update(field);
    manifest.update(std::string_view("\0", 1));  // the field's end
  };
  Status walked = walk_tree(root, [&](const TreeEntry& e) -> Status {
    std::array<char, 8> mode{};
    std::snprintf(mode.data(), mode.size(), "%04o", e.mode);
    switch (e.type) {
      case TreeEntry::Type::kDirectory:
        add("d");
        add(mode.data());
        add("");
        break;
      case TreeEntry::Type::kFile: {
        auto sum = file_sha256(root / e.path);
        if (!sum) return std::unexpected(sum.error());
        add("f");
        add(mode.data());
        add(*sum);
        break;
      }
      case TreeEntry::Type::kSymlink:
        add("l");
        add("");
        add(e.link_target);
        break;
    }
    add(e.path);
    return {};
  });
  if (!walked) return std::unexpected(walked.error());
  return "sha256:" + manifest.finish_hex();
}

Status copy_tree(const fs::path& source, const fs::path& target) {
  std::error_code ec;
  if (!fs::create_directory(target, ec) || ec) {
    return fail(ErrorCode::kSystem, "cannot create " + target.string() + ": " +
                                        (ec ? ec.message() : std::string("it exists")));
  }
  // Directories get their mode after their contents: a 0555 directory of the source must
  // still take its files first.
  std::vector<std::pair<fs::path, std::uint32_t>> dir_modes;
  Status copied = walk_tree(source, [&](const TreeEntry& e) -> Status {
    const fs::path to = target / e.path;
    std::error_code err;
    switch (e.type) {
      case TreeEntry::Type::kDirectory:
        fs::create_directory(to, err);
        dir_modes.emplace_back(to, e.mode);
        break;
      case TreeEntry::Type::kFile:
        fs::copy_file(source / e.path, to, fs::copy_options::none, err);
        if (!err && ::chmod(to.c_str(), e.mode) != 0) return fail_errno("chmod " + to.string());
        break;
      case TreeEntry::Type::kSymlink:
        fs::create_symlink(e.link_target, to, err);
        break;
    }
    if (err) return fail(ErrorCode::kSystem, "cannot copy " + e.path + ": " + err.message());
    return {};
  });
  if (!copied) return copied;
  for (const auto& [dir, mode] : std::views::reverse(dir_modes)) {
    if (::chmod(dir.c_str(), mode) != 0) return fail_errno("chmod " + dir.string());
  }
  return {};
}

}  // namespace cordon::environment
