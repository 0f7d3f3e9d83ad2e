// The one expansion of a SyscallPolicy into flat rules with at most one masked-equality
// argument comparison each. Both the BPF compiler and the OCI generator consume it, so
// the namespace and container backends enforce the same thing.
//
// Invariant: for one syscall the produced rules are pairwise disjoint (no argument value
// matches two rules with different verdicts) and, together, cover every value. Rule order
// therefore never matters, which is what makes libseccomp's and runc's differing merge
// behaviours irrelevant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy/syscall_policy.h"

namespace cordon::policy {

// (arg[index] & mask) == value, compared on all 64 bits.
struct MaskedEq {
  unsigned index = 0;
  std::uint64_t mask = 0;
  std::uint64_t value = 0;
  friend bool operator==(const MaskedEq&, const MaskedEq&) = default;
};

struct ConcreteRule {
  std::string name;
  Verdict verdict;
  std::optional<MaskedEq> arg;  // none: unconditional
};

// Target architectures for argument-index quirks. Only the s390 family differs for what
// cordon-default filters: its clone() takes (stack, flags, ...) (CLONE_BACKWARDS2).
enum class ArgLayout { kGeneric, kS390 };

[[nodiscard]] std::vector<ConcreteRule> expand_rules(const SyscallPolicy& policy,
                                                     ArgLayout layout = ArgLayout::kGeneric);

// Aligned blocks (mask, value) over the low 32 bits, disjoint, whose union is every
// 32-bit value except `excluded` (the classic range-to-prefix decomposition). Each block
// is matched by ((arg & mask) == value) with mask's upper 32 bits clear.
struct Low32Block {
  std::uint32_t mask = 0;
  std::uint32_t value = 0;
  friend bool operator==(const Low32Block&, const Low32Block&) = default;
};
[[nodiscard]] std::vector<Low32Block> low32_complement(std::vector<std::uint32_t> excluded);

}  // namespace cordon::policy
