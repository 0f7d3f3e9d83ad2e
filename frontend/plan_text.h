// What `cordon plan` (and `cordon run --dry-run`) prints: a backend's plan
// (Backend::describe_plan, typed: cordon/plan.h) completed with what every plan shows, as
// JSON (to_json(Plan)) or as text. Pure functions of plain data, unit-tested without plugins.
#pragma once

#include <string>

#include "cordon/capabilities.h"
#include "cordon/plan.h"
#include "cordon/policy/syscall_policy.h"
#include "cordon/request.h"

namespace cordon::frontend {

// How many rules of each kind a syscall policy has; `otherwise` in words ("fails with
// ENOSYS").
[[nodiscard]] SyscallRuleCounts syscall_rule_counts(const policy::SyscallPolicy& policy);

// Adds what a backend's own plan may leave out: `isolates` and `aspects` (from
// `capabilities`), limits for aspects its `limits` does not list (plan_limits() in
// cordon/backend.h), and, when its seccomp policy is one cordon knows by its hash, that
// policy's rule counts.
[[nodiscard]] Plan complete_plan(Plan plan, const RunRequest& request,
                                 const Capabilities& capabilities);

// The readable rendering: backend, isolation, namespaces, mounts one per line, files,
// seccomp policy name, hash and rule counts, limits with how each is enforced, rlimits
// and the command. Ends with a newline.
[[nodiscard]] std::string render_plan_text(const Plan& plan);

}  // namespace cordon::frontend
