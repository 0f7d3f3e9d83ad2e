// A non-blocking exclusive lock on a file that names an owner ("<pid>-<n>.lock", uid
// slots), shared by the container backend's instance locks and the namespace backend's uid
// slots so both keep the same open-flock-recheck order.
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

}  // namespace cordon
