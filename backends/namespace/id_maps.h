// Writing a child's uid_map / gid_map from the parent, while the child waits.
#pragma once

#include <sys/types.h>

#include "cordon/error.h"
#include "sandbox_plan.h"

namespace cordon::ns {

// setgroups ("deny" when the plan says so; it must precede gid_map for an unprivileged
// writer), then gid_map, then uid_map, each written in one write(2) as the kernel requires.
[[nodiscard]] Status write_id_maps(pid_t pid, const SandboxPlan& plan);

}  // namespace cordon::ns
