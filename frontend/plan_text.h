// What `cordon plan` (and `cordon run --dry-run`) prints: a backend's plan
// (Backend::describe_plan) completed with what every plan shows, as JSON or as text.
// Pure functions of plain data, unit-tested without plugins.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/capabilities.h"
#include "cordon/policy/syscall_policy.h"
#include "cordon/request.h"

namespace cordon::frontend {

// How many rules of each kind a syscall policy has: {"allowed": n (unconditional),
// "by_argument": n (allowed or denied depending on one argument), "denied": n (EPERM and
// other errnos, named explicitly), "killed": n, "otherwise": "ENOSYS" (the verdict of
// every syscall the policy does not name)}.
[[nodiscard]] nlohmann::json syscall_rule_counts(const policy::SyscallPolicy& policy);

// Adds what a backend's own plan may leave out: "isolates" and "aspects" (the per-aspect
// capabilities, from `capabilities`), limit entries for aspects its "limits" does not list
// (plan_limits() in cordon/backend.h), and, when "seccomp" names a policy cordon knows by
// its hash, that policy's rule counts as "seccomp"."rules".
[[nodiscard]] nlohmann::json complete_plan(nlohmann::json plan, const RunRequest& request,
                                           const Capabilities& capabilities);

// The readable rendering: backend, isolation, namespaces, mounts one per line, files,
// seccomp policy name, hash and rule counts, limits with how each is enforced, rlimits
// and the command. Ends with a newline.
[[nodiscard]] std::string render_plan_text(const nlohmann::json& plan);

}  // namespace cordon::frontend
