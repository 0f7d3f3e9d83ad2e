// A non-blocking exclusive lock on a file that names an owner ("<pid>-<n>.lock", uid
// slots, run cgroups' directories), shared by the container backend's instance locks, the
// namespace backend's uid slots and the cgroup sweep so all keep the same
// open-flock-recheck order. A lock, not a pid, says who owns: a flock is held exactly as
// long as some process keeps the owner's open file, whatever PID namespace it is in and
// whether or not its /proc entry can be read.
#pragma once

#include <filesystem>

#include "cordon/error.h"
#include "cordon/unique_fd.h"

namespace cordon {

enum class LockOpen {
  kCreateOrOpen,  // the file may exist already (a slot taken in turn)
  kCreateNew,     // the name must be new (O_EXCL); an existing one is a dead namesake's
};

// The locked fd; an invalid fd when the file is held by someone else, was unlinked by its
// holder between our open and our flock (the path no longer names what we would hold), or,
// with kCreateNew, already exists or lost its directory meanwhile: try another name.
[[nodiscard]] Result<UniqueFd> try_lock_file(const std::filesystem::path& path, LockOpen how);

// The same lock on an existing directory (a run cgroup's, whose owner holds it while the
// group is its own: proc::make_run_cgroup_dir): the locked fd (O_RDONLY|O_DIRECTORY), an
// invalid fd when someone holds it or the directory went between our open and our flock,
// an error when it cannot be opened. An error never means "free": a sweeper skips it.
[[nodiscard]] Result<UniqueFd> try_lock_dir(const std::filesystem::path& path);

}  // namespace cordon
