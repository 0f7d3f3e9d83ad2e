// The cordon-default seccomp program compiled at build time (seccomp_gen.cpp), so that
// creating a backend does not compile it with libseccomp (~13 ms, most of a CLI run).
// Other policies are still compiled at run time.
#pragma once

#include <optional>

#include "cordon/policy/seccomp_compiler.h"

namespace cordon::ns {

// The prebuilt program when it applies here: libseccomp's native architecture is the one
// it was built for and the built-in default policy still hashes to what it was built
// from. Otherwise nullopt, and the caller compiles.
[[nodiscard]] std::optional<policy::SeccompProgram> prebuilt_default_seccomp();

// The default policy's program: the prebuilt one where it applies, else compiled now.
[[nodiscard]] Result<policy::SeccompProgram> default_seccomp_program();

}  // namespace cordon::ns
