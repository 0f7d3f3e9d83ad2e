// A ChildPlan (child_setup.h) as bytes, for cordon-ns-spawner (setup_spawner.h): cordon
// encodes the plan PreparedChild made; the spawner decodes it into a ChildPlan whose
// pointers point into those bytes, and clones the set-up process from it. The fds travel
// beside the bytes (SCM_RIGHTS, spawner_protocol.h), so the encoding holds none.
//
// Layout (host byte order: both ends are builds of this tree on this machine): a header,
// `mount_count` mount records, then a heap of NUL-terminated strings and data and the
// seccomp instructions, all addressed by offsets from the start. The decoder checks every
// offset, length and terminator, every enum and count, before it makes a pointer; it is
// fuzzed (tests/fuzz/child_plan_wire_fuzz.cpp). Header-only types, no libcordon-core: the
// static spawner links the .cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "child_setup.h"

namespace cordon::ns {

inline constexpr std::uint32_t kChildPlanMagic = 0x504e5343;  // "CSNP"
inline constexpr std::uint32_t kChildPlanVersion = 1;
// Bounds the decoder holds a plan to (far above any real plan: ~40 mounts, 818 filter
// instructions, a 64-byte hostname).
inline constexpr std::uint32_t kMaxWireMounts = 4096;
inline constexpr std::uint32_t kMaxWireFilter = 4096;  // BPF_MAXINSNS
inline constexpr std::uint32_t kMaxWireHostname = 64;  // HOST_NAME_MAX

// Everything of `plan` but its fds (go, channel, report, init and the join fds travel
// beside it, in that order; their number is encoded) and init_argv/init_envp (always
// {"cordon-init", "ns"} and empty).
[[nodiscard]] std::string encode_child_plan(const ChildPlan& plan, std::uint64_t clone_flags);

struct DecodedChildPlan {
  ChildPlan plan;  // fds -1 (join_fd_count as encoded); pointers into the bytes and mounts
  std::vector<ChildMount> mounts;
  std::uint64_t clone_flags = 0;
};

// Decodes `bytes`, which must outlive `out` and be 8-byte aligned (a mapping or a heap
// string is). nullptr on success, else what is wrong with them.
[[nodiscard]] const char* decode_child_plan(std::string_view bytes, DecodedChildPlan& out);

}  // namespace cordon::ns
