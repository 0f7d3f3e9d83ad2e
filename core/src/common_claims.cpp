#include "cordon/common_claims.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "cordon/units.h"

namespace cordon {

// in_aspect_order() lists the claims in this order.
constexpr Aspect kClaimOrder[] = {
    Aspect::kNetwork,       Aspect::kFilesystem, Aspect::kEnvironment, Aspect::kProcessTree,
    Aspect::kSyscallFilter, Aspect::kMemory,     Aspect::kProcesses,   Aspect::kCpu,
    Aspect::kDisk,          Aspect::kOutput,     Aspect::kTimeout};
static_assert(std::ranges::equal(kClaimOrder, kAllAspects), "kAllAspects changed its order");

Capabilities in_aspect_order(AspectClaims claims, const Limits& limits) {
  Capabilities caps;
  caps.aspects = {std::move(claims.network),        std::move(claims.filesystem),
                  std::move(claims.environment),    std::move(claims.process_tree),
                  std::move(claims.syscall_filter), std::move(claims.memory),
                  std::move(claims.processes),      std::move(claims.cpu),
                  std::move(claims.disk),           output_capability(limits),
                  std::move(claims.timeout)};
  for (std::size_t i = 0; i < caps.aspects.size(); ++i) caps.aspects[i].aspect = kClaimOrder[i];
  return caps;
}

Capability output_capability(const Limits& limits) {
  return capability(Aspect::kOutput, Enforcement::kEnforced, "capture cap per stream",
                    format_size(effective_output_cap(limits)),
                    "output past the cap is read and discarded; the result is marked truncated",
                    kOutputRange);
}

Capability network_namespace_capability(bool on, std::string detail) {
  if (!on) {
    return capability(Aspect::kNetwork, Enforcement::kNone, "", std::nullopt,
                      "network namespace switched off: the host's network is reachable");
  }
  return capability(Aspect::kNetwork, Enforcement::kEnforced,
                    "network namespace with loopback only", std::nullopt, std::move(detail));
}

Capability syscall_filter_capability(bool on, std::string mechanism, std::string detail) {
  if (!on) {
    return capability(Aspect::kSyscallFilter, Enforcement::kNone, "", std::nullopt,
                      "seccomp switched off");
  }
  return capability(Aspect::kSyscallFilter, Enforcement::kEnforced, std::move(mechanism),
                    std::nullopt, std::move(detail));
}

std::string seccomp_mechanism(std::string_view name, int version, std::string_view hash) {
  return "seccomp " + std::string(name) + " v" + std::to_string(version) + " " + std::string(hash);
}

Capability scratch_capability(std::uint64_t bytes, std::string_view more) {
  return capability(Aspect::kDisk, Enforcement::kEnforced, "tmpfs size", format_size(bytes),
                    "the only writable places are the /tmp tmpfs and a 16 MiB /dev/shm; writes "
                    "past them fail with ENOSPC" +
                        std::string(more),
                    kScratchRange);
}

}  // namespace cordon
