// What a backend enforces, per aspect, by what mechanism and with what value.
//
// Never bare booleans: "memory: enforced by cgroup v1 memory.limit_in_bytes, 256 MiB"
// is what the tool-description renderer and the inspector's comparison are built on.
// A backend states what it enforces and never claims more.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon {

enum class Aspect {
  kNetwork,
  kFilesystem,
  kEnvironment,  // environment variables and ambient credentials
  kProcessTree,  // other processes of the host, and the runtime's own
  kSyscallFilter,
  kMemory,
  kProcesses,
  kCpu,
  kDisk,
  kOutput,
  kTimeout,
};

inline constexpr Aspect kAllAspects[] = {
    Aspect::kNetwork,       Aspect::kFilesystem, Aspect::kEnvironment, Aspect::kProcessTree,
    Aspect::kSyscallFilter, Aspect::kMemory,     Aspect::kProcesses,   Aspect::kCpu,
    Aspect::kDisk,          Aspect::kOutput,     Aspect::kTimeout};

// The aspects that make a backend a sandbox rather than a timeout.
inline constexpr Aspect kIsolationAspects[] = {Aspect::kNetwork, Aspect::kFilesystem,
                                               Aspect::kEnvironment, Aspect::kProcessTree};

std::string_view to_string(Aspect aspect);  // "network", "process_tree", ...

enum class Enforcement {
  kNone,      // not enforced at all
  kPartial,   // enforced in part; `detail` says which part is not
  kEnforced,  // enforced for every process of the run
};

std::string_view to_string(Enforcement enforcement);  // "none", "partial", "enforced"

inline constexpr Enforcement kAllEnforcements[] = {Enforcement::kNone, Enforcement::kPartial,
                                                   Enforcement::kEnforced};

// The values of one limit a backend can honour, in the unit of its aspect: bytes (memory,
// disk, output), processes, or milliseconds (cpu). Below `min` a run cannot start at all
// (what the set-up and an interpreter need, measured, with headroom); above `max` the
// kernel or runtime refuses the value or silently changes it. A request outside the range
// is refused before anything starts (limit_check.h).
struct LimitRange {
  std::uint64_t min = 1;
  std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  friend bool operator==(const LimitRange&, const LimitRange&) = default;
};

// How an aspect is enforced, as data: an identifier and its parameters, in a fixed order
// (claims.h renders the words). {"rlimit", {{"resource", "RLIMIT_AS"}, {"per", "process"}}}.
struct Mechanism {
  std::string kind;  // "" for none
  std::vector<std::pair<std::string, std::string>> params;
  friend bool operator==(const Mechanism&, const Mechanism&) = default;
};

// A claimed value as data: an amount in the aspect's unit, or a text (a digest, a CPU
// share). claims.h renders it ("256 MiB", "5 s", "1 CPU").
struct Quantity {
  enum class Unit { kBytes, kCount, kMilliseconds, kCpus, kText };
  Unit unit = Unit::kText;
  std::uint64_t amount = 0;  // kBytes, kCount, kMilliseconds
  std::string text;          // kCpus ("0.5"), kText
  friend bool operator==(const Quantity&, const Quantity&) = default;
};

struct Capability {
  Aspect aspect = Aspect::kNetwork;
  Enforcement enforcement = Enforcement::kNone;
  std::string mechanism;             // "cgroup v2 cgroup.kill", "RLIMIT_AS", "" for none
  std::optional<std::string> value;  // "256 MiB", "5 s"; unset when not applicable
  std::string detail;                // plain words, esp. what is NOT covered
  // For a limit aspect (memory, processes, cpu, disk, output) the backend can enforce: the
  // values a request may ask for. Unset for the others. An entry that is kNone because the
  // limit was not asked for may carry the range it would take; asked for and still kNone,
  // the limit is refused whatever its range.
  std::optional<LimitRange> range;
  // The data `mechanism` and `value` are rendered from (claims.h: claim()), and the
  // conditions the claim holds under ("default_ceiling", "no_cgroup"): what the audit's
  // policy hash covers. Empty for an entry made from words only (capability()).
  Mechanism by;
  std::optional<Quantity> quantity;
  std::vector<std::string> conditions;
};

// One aspect's entry from words only (tests, fixtures); backends declare with claim().
[[nodiscard]] inline Capability capability(Aspect aspect, Enforcement enforcement,
                                           std::string mechanism, std::optional<std::string> value,
                                           std::string detail,
                                           std::optional<LimitRange> range = std::nullopt) {
  return Capability{
      aspect, enforcement, std::move(mechanism), std::move(value), std::move(detail), range, {},
      {},     {}};
}

struct Capabilities {
  std::vector<Capability> aspects;  // one entry per Aspect, in kAllAspects order

  [[nodiscard]] const Capability* find(Aspect aspect) const;
  [[nodiscard]] Enforcement level(Aspect aspect) const;  // kNone when absent
  // How many isolation aspects are fully enforced: the ranking for `--backend auto`.
  [[nodiscard]] int isolation_score() const;
  // True when every isolation aspect is fully enforced.
  [[nodiscard]] bool isolates() const;
};

}  // namespace cordon
