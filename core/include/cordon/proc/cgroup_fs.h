// Reading and writing cgroup control files with the fewest syscalls (core and backends).
//
// Each run creates, fills, reads and removes a few groups, so these use open/read/close on
// a stack buffer instead of iostreams: control files are small, and kernfs produces a
// whole file in one read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::proc::cgroupfs {

// The whole text of a file (reads until EOF: seq files such as mountinfo or cgroup.procs
// may return fewer bytes than asked while more follow), or an error with errno.
[[nodiscard]] Result<std::string> read(const std::filesystem::path& path);
// A small single-record control file (memory.oom_control, pids.events, cpu.stat, ...) in
// one read(): kernfs produces such a file whole in the first read, so no read for EOF.
[[nodiscard]] Result<std::string> read_small(const std::filesystem::path& path);
// One write() of `text`; cgroup files take a value per write.
[[nodiscard]] Status write(const std::filesystem::path& path, std::string_view text);
// Removes the cgroup `dir` and the cgroups below it, deepest first (a cgroup with child
// cgroups cannot go), with rmdir only: a cgroup's control files cannot be unlinked, which
// is why this is not cordon::remove_tree. Gone already is success; a still populated
// group fails with EBUSY in sys_errno.
[[nodiscard]] Status remove_tree(const std::filesystem::path& dir);

// The number after `key ` on its own line ("oom_kill 3", "max 0", "usage_usec 12").
[[nodiscard]] std::optional<std::int64_t> keyed_value(std::string_view text, std::string_view key);
// Whether a list file ("cpu memory pids\n": cgroup.controllers, cgroup.subtree_control)
// names `word` as a whole entry (never as a prefix: "pids" is not in "pids_extra").
[[nodiscard]] bool has_word(std::string_view list, std::string_view word);
// The number a file holds ("67108864\n").
[[nodiscard]] std::optional<std::int64_t> single_value(std::string_view text);

}  // namespace cordon::proc::cgroupfs
