// The walk of an environment's tree that its digest and the store's copy share: every
// entry below the root, depth first, each directory's entries in bytewise order of name,
// without following symlinks; devices, fifos and sockets skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "cordon/error.h"

namespace cordon::environment {

struct TreeEntry {
  enum class Type { kDirectory, kFile, kSymlink };
  std::string path;        // relative to the root, '/'-separated
  std::uint32_t mode = 0;  // permission bits (07777)
  Type type = Type::kFile;
  std::string
      link_target{};  // NOLINT(readability-redundant-member-init): g++'s initialiser warning
};

using TreeVisitor = std::function<Status(const TreeEntry&)>;

// Calls `visit` for each entry; stops at the first error (its own or the walk's).
[[nodiscard]] Status walk_tree(const std::filesystem::path& root, const TreeVisitor& visit);

// Copies the tree below `source` into `target` (created; must not exist): directories,
// regular files and symlinks with their permission bits, owned by the caller.
[[nodiscard]] Status copy_tree(const std::filesystem::path& source,
                               const std::filesystem::path& target);

}  // namespace cordon::environment
