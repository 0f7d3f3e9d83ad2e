// SyscallPolicy -> the OCI runtime-spec `linux.seccomp` object (config-linux.md,
// "Seccomp"), for the container backend's config.json.
#pragma once

#include <nlohmann/json.hpp>

#include "cordon/policy/syscall_policy.h"

namespace cordon::policy {

// defaultAction/defaultErrnoRet from the policy's default, architectures = the native
// one only (so the runtime's bad-architecture action, which OCI cannot express, applies
// to every other ABI), one `syscalls` entry per verdict for unconditional names and one
// per concrete argument rule (a single SCMP_CMP_MASKED_EQ: value = mask, valueTwo =
// expected), never two comparisons on one argument, which runc would OR together.
// Names unknown to the runtime's libseccomp are skipped by runc and crun.
[[nodiscard]] nlohmann::json to_oci_seccomp(const SyscallPolicy& policy);

// "SCMP_ARCH_X86_64" etc. for the architecture this process runs on.
[[nodiscard]] std::string native_oci_arch();

}  // namespace cordon::policy
