#include "cordon/limit_check.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "cordon/units.h"

namespace cordon {

std::optional<std::uint64_t> asked_limit(const Limits& limits, Aspect aspect) {
  switch (aspect) {
    case Aspect::kMemory:
      return limits.memory_bytes;
    case Aspect::kProcesses:
      return limits.max_processes;
    case Aspect::kCpu:
      // A negative CPU time is not a limit anyone can honour: refused as below range.
      if (limits.cpu_time)
        return static_cast<std::uint64_t>(std::max<std::int64_t>(limits.cpu_time->count(), 0));
      return std::nullopt;
    case Aspect::kDisk:
      return limits.scratch_bytes;
    case Aspect::kOutput:
      if (limits.output_bytes != 0) return limits.output_bytes;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

LimitRange rlimit_range(int resource, std::uint64_t min, std::uint64_t most, std::uint64_t unit,
                        std::uint64_t reserved) {
  struct rlimit cur{};
  if (::getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    const std::uint64_t hard = cur.rlim_max > reserved ? cur.rlim_max - reserved : 0;
    if (hard < most / unit) most = hard * unit;
  }
  return LimitRange{min, std::max(min, most)};
}

std::optional<rlim_t> hard_rlimit(int resource) {
  struct rlimit r{};
  if (::getrlimit(resource, &r) != 0) return std::nullopt;
  return r.rlim_max;
}

LimitRange rlimit_cpu_range() {
  return rlimit_range(RLIMIT_CPU, kRlimitCpuRange.min, kRlimitCpuRange.max, /*unit=*/1000,
                      /*reserved=*/1);
}

std::string_view limit_name(Aspect aspect) {
  switch (aspect) {
    case Aspect::kMemory:
      return "memory limit";
    case Aspect::kProcesses:
      return "process limit";
    case Aspect::kCpu:
      return "CPU time limit";
    case Aspect::kDisk:
      return "scratch size";
    case Aspect::kOutput:
      return "output cap";
    default:
      return to_string(aspect);
  }
}

std::string format_limit(Aspect aspect, std::uint64_t value) {
  switch (aspect) {
    case Aspect::kMemory:
    case Aspect::kDisk:
    case Aspect::kOutput:
      return format_size(value);
    case Aspect::kCpu:
      // kMaxDuration (~292 years) is only ever a range's open end: no duration is longer.
      return value >= static_cast<std::uint64_t>(kMaxDuration.count())
                 ? std::string("292 years")
                 : format_duration(std::chrono::milliseconds(value));
    default:
      return std::to_string(value);
  }
}

std::string format_range(Aspect aspect, const LimitRange& range) {
  return format_limit(aspect, range.min) + " to " + format_limit(aspect, range.max);
}

std::optional<LimitRefusal> refuse_limits(const Limits& limits, const Capabilities& capabilities,
                                          std::string_view backend) {
  const std::string who = "the " + std::string(backend) + " backend";
  for (const Aspect aspect : kRequestLimitAspects) {
    const std::optional<std::uint64_t> asked = asked_limit(limits, aspect);
    if (!asked) continue;
    const Capability* cap = capabilities.find(aspect);
    if (cap == nullptr || cap->enforcement == Enforcement::kNone) {
      std::string why = who + " cannot enforce a " + std::string(limit_name(aspect));
      if (cap != nullptr && !cap->detail.empty()) why += " (" + cap->detail + ")";
      return LimitRefusal{aspect, why + "; choose a backend that does (cordon backends)"};
    }
    if (!cap->range) continue;
    const LimitRange& range = *cap->range;
    if (*asked < range.min || *asked > range.max) {
      return LimitRefusal{aspect, format_limit(aspect, *asked) + " is " +
                                      (*asked < range.min ? "below" : "above") + " what " + who +
                                      " can honour: it accepts " + format_range(aspect, range)};
    }
  }
  return std::nullopt;
}

Status check_limits(const Limits& limits, const Capabilities& capabilities,
                    std::string_view backend) {
  if (auto refusal = refuse_limits(limits, capabilities, backend)) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(limit_name(refusal->aspect)) + ": " + refusal->reason);
  }
  return {};
}

}  // namespace cordon
