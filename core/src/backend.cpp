// The default plan of a backend: what its capabilities() say about a request, in the
// shape every plan shares (backend.h).
#include "cordon/backend.h"

#include <algorithm>
#include <optional>
#include <string>

#include "cordon/claims.h"
#include "cordon/interpreter.h"
#include "cordon/limit_check.h"
#include "cordon/result_json.h"
#include "cordon/units.h"

namespace cordon {

std::string backend_label(std::string_view name, std::string_view variant) {
  std::string out(name);
  if (!variant.empty()) out.append(" (").append(variant).append(")");
  return out;
}
namespace {

// The value asked for a limit aspect, as people read it; unset when none was asked for.
std::optional<std::string> requested(Aspect aspect, const RunRequest& request) {
  const Limits& limits = request.limits;
  switch (aspect) {
    case Aspect::kTimeout:
      return format_duration(effective_timeout(request));
    case Aspect::kOutput:
      return format_size(effective_output_cap(limits)) + " per stream";
    case Aspect::kMemory:
      if (limits.memory_bytes) return format_size(*limits.memory_bytes);
      break;
    case Aspect::kProcesses:
      if (limits.max_processes) return std::to_string(*limits.max_processes);
      break;
    case Aspect::kCpu:
      if (limits.cpu_time) return format_duration(*limits.cpu_time);
      break;
    case Aspect::kDisk:
      if (limits.scratch_bytes) return format_size(*limits.scratch_bytes);
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace

std::vector<PlanLimit> plan_limits(const RunRequest& request, const Capabilities& capabilities) {
  std::vector<PlanLimit> limits;
  for (const Aspect aspect : {Aspect::kTimeout, Aspect::kMemory, Aspect::kProcesses, Aspect::kCpu,
                              Aspect::kDisk, Aspect::kOutput}) {
    const Capability* cap = capabilities.find(aspect);
    std::optional<std::string> value = requested(aspect, request);
    // A limit nobody asked for is listed only when the backend enforces one anyway
    // (a scratch size of its own, say).
    if (!value && (cap == nullptr || cap->enforcement == Enforcement::kNone)) continue;
    if (cap != nullptr && cap->value) value = cap->value;
    PlanLimit entry{
        .aspect = aspect,
        .value = std::move(value),
        .by = cap != nullptr && !cap->mechanism.empty() ? cap->mechanism : "not enforced",
        .enforcement = cap != nullptr ? cap->enforcement : Enforcement::kNone,
        // A ceiling the backend applies though the request asked for none.
        .is_default = cap != nullptr &&
                      std::ranges::find(cap->conditions, kDefaultCeiling) != cap->conditions.end()};
    limits.push_back(std::move(entry));
  }
  return limits;
}

Status check_request(const Backend& backend, const RunRequest& request) {
  if (Status valid = validate(request); !valid) return valid;
  const Capabilities caps = backend.capabilities(request.limits);
  if (request.network.any()) {
    // Fail closed: a backend that cannot carry the list never runs the code with the host's
    // network, nor quietly with none while the caller thinks the list holds.
    const Capability* network = caps.find(Aspect::kNetwork);
    if (network == nullptr || !carries_allow_list(*network)) {
      return fail(ErrorCode::kUnavailable,
                  "the " + std::string(backend.name()) +
                      " backend cannot give a run a network allow-list (--allow-net): " +
                      (network != nullptr && network->enforcement == Enforcement::kNone
                           ? "it does not isolate the network at all"
                           : "it has no egress proxy") +
                      "; use the namespace backend, or the container backend without an engine");
    }
  }
  if (const InterpreterSpec& spec = interpreter_spec(request.language);
      spec.reserves_address_space) {
    // Never run without the memory limit the caller was told of: refused instead.
    const Capability* memory = caps.find(Aspect::kMemory);
    const std::pair<std::string, std::string> as{"resource", "RLIMIT_AS"};
    const bool rlimit_as = memory != nullptr && memory->enforcement != Enforcement::kNone &&
                           (std::ranges::find(memory->by.params, as) != memory->by.params.end() ||
                            memory->mechanism.find("RLIMIT_AS") != std::string::npos);
    if (rlimit_as) {
      return fail(ErrorCode::kUnavailable,
                  std::string(to_string(request.language)) + " cannot run under the " +
                      std::string(backend.name()) +
                      " backend's memory limit here: it is RLIMIT_AS per process, and " +
                      std::string(spec.executable) +
                      " reserves far more address space than it uses; it needs a cgroup "
                      "memory limit (run cordon as root, or with a delegated cgroup)");
    }
  }
  return check_limits(request.limits, caps, backend.name());
}

Result<void> Backend::prepare() { return {}; }

Result<std::unique_ptr<BackendSession>> Backend::open_session(const SessionOptions& /*options*/) {
  return fail(ErrorCode::kUnavailable, "the " + backend_label(std::string(name()), variant()) +
                                           " backend does not hold sessions");
}

Result<Plan> Backend::describe_plan(const RunRequest& request) const {
  if (Status valid = check_request(*this, request); !valid) return std::unexpected(valid.error());
  const Capabilities caps = capabilities(request.limits);
  Plan plan;
  plan.backend_name = name();
  plan.backend_version = version();
  plan.isolates = caps.isolates();
  plan.timeout_ms = effective_timeout(request).count();
  plan.limits = plan_limits(request, caps);
  plan.namespaces.emplace();
  plan.filesystem.emplace(std::nullopt);
  plan.aspects = caps;
  return plan;
}

}  // namespace cordon
