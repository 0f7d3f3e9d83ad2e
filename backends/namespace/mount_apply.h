// One step of the root-filesystem plan, applied in the child: async-signal-safe, no
// allocation. Returns 0 or an errno.
#pragma once

#include <cstddef>
#include <string_view>

#include "child_setup.h"

namespace cordon::ns {

[[nodiscard]] int apply_mount(const ChildMount& m) noexcept;

// The mount point (fifth field) of one /proc/self/mountinfo line, unescaped, into `out`
// as a C string; false when the line has none or it does not fit. For the fallback that
// remounts a bind's submounts one by one where mount_setattr is missing.
[[nodiscard]] bool mountinfo_mount_point(std::string_view line, char* out,
                                         std::size_t out_size) noexcept;
// Whether `path` lies strictly below the directory `dir` (both absolute, normalised).
[[nodiscard]] bool path_strictly_under(const char* path, const char* dir) noexcept;

}  // namespace cordon::ns
