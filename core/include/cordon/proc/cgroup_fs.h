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

// What a group's own files say about the processes in it: the one reading of these figures
// for every backend's groups (limit groups, the subprocess kill group, the container's
// groups), on v2 (`v2`) and v1 alike. Unset (false): the file is absent or holds no such
// figure, e.g. a hierarchy without that controller.
//
// Each figure comes from one file: figure_file() names it, figure_value() reads its text.
// A group whose figures are read after every run (LimitGroup) opens the files once, when
// it is made, and reads them with read_again(): on this machine kind the path lookup
// through the cgroup filesystem, the open and the close cost ~3x the read, and for a
// pooled sandbox they then happen before the run instead of on its way back.
enum class Figure {
  kMemoryCurrent,  // bytes: memory.current / memory.usage_in_bytes
  kMemoryPeak,     // bytes: memory.peak / memory.max_usage_in_bytes
  kCpuUsec,        // microseconds: cpu.stat usage_usec / cpuacct.usage (ns)
  kOomKills,       // memory.events / memory.oom_control: oom_kill
  kPidsMaxHits,    // pids.events: max (the same file on v1 and v2)
};
[[nodiscard]] const char* figure_file(Figure figure, bool v2);
[[nodiscard]] std::optional<std::int64_t> figure_value(Figure figure, bool v2,
                                                       std::string_view text);
// The figure from `dir`'s file, opened and read now.
[[nodiscard]] std::optional<std::int64_t> read_figure(const std::filesystem::path& dir,
                                                      Figure figure, bool v2);
// A small control file's text again, through an fd opened earlier: a read from offset 0
// (pread), for which kernfs makes the text anew, so the figure is today's, not the open's.
[[nodiscard]] Result<std::string> read_again(int fd);
// Memory in use now, bytes: memory.current / memory.usage_in_bytes.
[[nodiscard]] std::optional<std::int64_t> memory_current(const std::filesystem::path& dir, bool v2);
// The most memory in use since the group was made, bytes: memory.peak (Linux 5.19) /
// memory.max_usage_in_bytes.
[[nodiscard]] std::optional<std::int64_t> memory_peak(const std::filesystem::path& dir, bool v2);
// CPU time of every process ever in the group, microseconds: cpu.stat's usage_usec /
// cpuacct.usage (nanoseconds).
[[nodiscard]] std::optional<std::int64_t> cpu_usec(const std::filesystem::path& dir, bool v2);
// Whether the OOM killer killed in the group: memory.events' oom_kill (the group and
// below) / memory.oom_control's oom_kill (the group where the kill happened).
[[nodiscard]] bool oom_killed(const std::filesystem::path& dir, bool v2);
// Whether a fork was refused at pids.max: pids.events' max. The kernel counts it in the
// group of the process that forked, v1 always and v2 before Linux 6.10, not in the
// ancestor holding the limit: a caller whose limit sits above the code's group reads both.
[[nodiscard]] bool pids_max_hit(const std::filesystem::path& dir);

}  // namespace cordon::proc::cgroupfs
