// One step of the root-filesystem plan, applied in the child: async-signal-safe, no
// allocation. Returns 0 or an errno.
#pragma once

#include "child_setup.h"

namespace cordon::ns {

[[nodiscard]] int apply_mount(const ChildMount& m) noexcept;

}  // namespace cordon::ns
