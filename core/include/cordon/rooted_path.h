// A path as a process whose root is `root` would resolve it, reached from the host: an
// environment's /usr/bin/awk -> /etc/alternatives/awk -> /usr/bin/mawk must end at
// <root>/usr/bin/mawk, never at the host's file of that name. What the sandbox does
// itself with chroot/pivot_root, done by hand for the host-side lookups that run before
// it exists (finding the interpreter, the inventory's tools).
#pragma once

#include <filesystem>
#include <optional>

namespace cordon {

// `inside` (absolute, as seen under `root`) resolved component by component, each symlink
// followed below `root` (an absolute target restarts at `root`; ".." stops at it), at most
// 40 links. The host path of what it names, or nullopt when it does not exist or loops.
// `root` "/" is the host's own resolution.
[[nodiscard]] std::optional<std::filesystem::path> resolve_below(
    const std::filesystem::path& root, const std::filesystem::path& inside);

}  // namespace cordon
