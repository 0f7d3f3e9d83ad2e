// The capability entries that several backends state in the same words, written once, so
// that what they claim alike cannot drift apart (docs/CONVENTIONS.md 7b).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/capabilities.h"
#include "cordon/limit_check.h"
#include "cordon/request.h"

namespace cordon {

// What a scratch /tmp tmpfs may be sized to: 1 MiB (what a run needs to start) to what the
// kernel takes.
inline constexpr LimitRange kScratchRange{1ULL << 20, kTmpfsSizeMax};

// A backend's claim for each aspect but the output cap, which the run driver enforces
// alike for every backend (output_capability()).
struct AspectClaims {
  Capability network;
  Capability filesystem;
  Capability environment;
  Capability process_tree;
  Capability syscall_filter;
  Capability memory;
  Capability processes;
  Capability cpu;
  Capability disk;
  Capability timeout;
};

// What capabilities() returns: one entry per aspect, in kAllAspects order, the output cap
// for `limits` among them.
[[nodiscard]] Capabilities in_aspect_order(AspectClaims claims, const Limits& limits);

// The output aspect: the run driver caps each stream alike for every backend.
[[nodiscard]] Capability output_capability(const Limits& limits);

// The network aspect of a sandbox in a network namespace of its own with only lo up
// (`detail`: the backend's words on how), or, when `on` is false, with that namespace
// switched off.
[[nodiscard]] Capability network_namespace_capability(bool on, std::string detail);

// The syscall filter: seccomp with `policy` (seccomp_mechanism()), or, when `on` is
// false, switched off.
[[nodiscard]] Capability syscall_filter_capability(bool on, std::string mechanism,
                                                   std::string detail);
// "seccomp <name> v<version> <hash>".
[[nodiscard]] std::string seccomp_mechanism(std::string_view name, int version,
                                            std::string_view hash);

// The disk aspect of a sandbox whose only writable places are a /tmp tmpfs of `bytes` and
// a 16 MiB /dev/shm; `more` is appended to the detail.
[[nodiscard]] Capability scratch_capability(std::uint64_t bytes, std::string_view more = "");

}  // namespace cordon
