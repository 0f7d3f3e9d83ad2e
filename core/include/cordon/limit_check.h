// Whether a backend can honour the limits a request asks for, checked before anything
// starts: one rule for every limit and every backend. A limit that the backend's
// capabilities say it does not enforce at all (Enforcement::kNone) is refused, never
// dropped in silence; a value outside the LimitRange the backend declares for it is
// refused naming the range. Backends call it through check_request() (backend.h) at the
// top of run() and describe_plan(); the CLI calls refuse_limits() to name its flags.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/capabilities.h"
#include "cordon/error.h"
#include "cordon/request.h"
#include "cordon/units.h"

namespace cordon {

// Bounds that come from the kernel or from cordon itself, for backends to build their
// ranges from (each backend still declares its own, per limit, in capabilities()).
//
// The most pids.max takes (PID_MAX_LIMIT); a larger value is refused with EINVAL.
inline constexpr std::uint64_t kPidsMaxLimit = 4194304;
// The largest memory limit a cgroup keeps as given; above it the kernel silently clamps.
inline constexpr std::uint64_t kCgroupMemoryMax = INT64_MAX;
// The largest tmpfs size cordon mounts: size=2^64-1 would wrap to 0, unlimited.
inline constexpr std::uint64_t kTmpfsSizeMax = INT64_MAX;
// The address space (RLIMIT_AS) a run needs at least: python3 -c 'import json' needs
// 16 MiB to start on Debian 12 (measured), sh much less; twice that for headroom.
inline constexpr std::uint64_t kMinAddressSpaceBytes = 32ULL << 20;
// Output caps every backend accepts: cordon keeps up to kMaxOutputBytes per stream.
inline constexpr LimitRange kOutputRange{1, kMaxOutputBytes};
// CPU time limits as RLIMIT_CPU takes them (whole seconds, rounded up): 1 ms upwards.
inline constexpr LimitRange kRlimitCpuRange{1, static_cast<std::uint64_t>(kMaxDuration.count())};

// The range of an rlimit this process can set: `min` up to `most`, and no higher than the
// current hard limit less `reserved` (in rlimit units: what the backend adds itself, such
// as its init), times `unit` (1000 for RLIMIT_CPU's seconds as milliseconds). Without
// CAP_SYS_RESOURCE (root lacks it on some hosts) a hard limit cannot be raised.
[[nodiscard]] LimitRange rlimit_range(int resource, std::uint64_t min, std::uint64_t most,
                                      std::uint64_t unit = 1, std::uint64_t reserved = 0);

// This process's hard limit of `resource` (RLIM_INFINITY when unlimited), nullopt when
// getrlimit fails: what a sandbox's own rlimits may not exceed without CAP_SYS_RESOURCE.
[[nodiscard]] std::optional<rlim_t> hard_rlimit(int resource);

// CPU time limits as backends set RLIMIT_CPU, (secs, secs + 1) with secs the limit
// rounded up to whole seconds: kRlimitCpuRange within the hard limit less a second.
[[nodiscard]] LimitRange rlimit_cpu_range();

// The limit aspects a request can set, in the order they are checked.
inline constexpr Aspect kRequestLimitAspects[] = {Aspect::kMemory, Aspect::kProcesses, Aspect::kCpu,
                                                  Aspect::kDisk, Aspect::kOutput};

// The value `limits` asks for `aspect`, in the aspect's unit (bytes, processes,
// milliseconds); unset when it asks for none. An output cap of 0 (the default) is unset.
[[nodiscard]] std::optional<std::uint64_t> asked_limit(const Limits& limits, Aspect aspect);

// "memory limit", "process limit", "CPU time limit", "scratch size", "output cap".
[[nodiscard]] std::string_view limit_name(Aspect aspect);
// A value of `aspect` as people read it: "16 MiB", "8", "1 ms".
[[nodiscard]] std::string format_limit(Aspect aspect, std::uint64_t value);
// "16 MiB to 8 EiB".
[[nodiscard]] std::string format_range(Aspect aspect, const LimitRange& range);

struct LimitRefusal {
  Aspect aspect;       // which limit
  std::string reason;  // why, naming the backend and what it accepts
};

// The first limit of `limits` that `backend` (its name, for the message) cannot honour
// according to `capabilities` (its capabilities(limits)); nullopt when all can be.
[[nodiscard]] std::optional<LimitRefusal> refuse_limits(const Limits& limits,
                                                        const Capabilities& capabilities,
                                                        std::string_view backend);

// refuse_limits() as a Status: kInvalidArgument "<limit name>: <reason>".
[[nodiscard]] Status check_limits(const Limits& limits, const Capabilities& capabilities,
                                  std::string_view backend);

}  // namespace cordon
