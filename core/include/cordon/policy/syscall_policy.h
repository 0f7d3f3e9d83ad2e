// The sandbox's syscall policy as plain data: one description that the namespace
// backend compiles to a seccomp BPF program (seccomp_compiler.h) and the container
// backend turns into the OCI `linux.seccomp` section (oci_seccomp.h).
//
// A policy is an allow-list: every syscall it does not name gets `default_verdict`
// (ERRNO(ENOSYS) in cordon-default, so calls newer than the host's libseccomp can name,
// like listmount or mseal, are denied as "not implemented" and libc falls back where it
// can). Dangerous calls are named explicitly with EPERM so that callers see a clear
// "forbidden". A few calls are allowed or denied depending on one argument (clone flags,
// ioctl request, personality, socket family): see ArgCondition.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::policy {

// What happens to a matching syscall.
struct Verdict {
  enum class Kind { kAllow, kErrno, kKillProcess };
  Kind kind = Kind::kAllow;
  int errno_value = 0;  // only for kErrno (1..4095)

  static Verdict allow() { return {Kind::kAllow, 0}; }
  static Verdict error(int err) { return {Kind::kErrno, err}; }
  static Verdict kill_process() { return {Kind::kKillProcess, 0}; }
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

// A verdict that depends on one syscall argument. Only two shapes are offered, both of
// which the compilers expand into *disjoint* single-comparison rules (libseccomp 2.5
// refuses two comparisons on one argument in a rule, and an unconditional rule silently
// overrides conditional ones for the same syscall; runc ORs same-argument comparisons),
// so the meaning is identical in every backend and independent of rule order.
struct ArgCondition {
  enum class Match {
    // (arg & mask) != 0: any of the bits is set (clone namespace flags).
    kAnyBitSet,
    // (uint32_t)arg is one of `values`. Compares the low 32 bits only, because the kernel
    // truncates int/unsigned-int arguments: ioctl(fd, 0x1'0000'5412) *is* TIOCSTI, so a
    // 64-bit compare would be a bypass.
    kLow32In,
  };
  unsigned index = 0;  // argument number 0..5, as on x86_64 (see compiler for s390 clone)
  Match match = Match::kAnyBitSet;
  std::uint64_t mask = 0;             // kAnyBitSet
  std::vector<std::uint32_t> values;  // kLow32In (small: each one costs a BPF compare)
  Verdict on_match;                   // the rule's `verdict` applies otherwise
  friend bool operator==(const ArgCondition&, const ArgCondition&) = default;
};

struct SyscallRule {
  std::string name;  // as libseccomp / the OCI spec spell it
  Verdict verdict;   // unconditional, or "otherwise" when `when` is set
  std::optional<ArgCondition> when;
  friend bool operator==(const SyscallRule&, const SyscallRule&) = default;
};

struct SyscallPolicy {
  std::string name;
  int version = 0;
  Verdict default_verdict = Verdict::error(38 /*ENOSYS*/);
  // Syscalls made through another ABI (i386 int 0x80 on x86_64, x32, arm32 on arm64)
  // would bypass a filter written for native numbers: kill the process instead.
  Verdict foreign_arch = Verdict::kill_process();
  std::vector<SyscallRule> rules;  // one rule per name
};

// cordon-default v1: what sh, bash, python3 and coreutils need, and nothing that widens
// the kernel attack surface. The rationale per group is in default_syscall_policy.cpp.
[[nodiscard]] const SyscallPolicy& default_syscall_policy();

// Structural checks: names unique and well-formed, errnos in range, conditions sane,
// the default not "allow" (the policy must stay an allow-list).
[[nodiscard]] Status validate(const SyscallPolicy& policy);

// Canonical JSON: keys sorted, names sorted, no whitespace, so equal policies serialise
// to equal bytes whatever the order their rules were written in.
[[nodiscard]] nlohmann::json to_json(const SyscallPolicy& policy);
[[nodiscard]] std::string canonical_form(const SyscallPolicy& policy);
[[nodiscard]] Result<SyscallPolicy> syscall_policy_from_json(const nlohmann::json& json);

// "sha256:<hex>" of canonical_form(): the identity shown in results as policy.hash.
[[nodiscard]] std::string content_hash(const SyscallPolicy& policy);

}  // namespace cordon::policy
