// Expansion of argument conditions into disjoint single-comparison rules.
#include "cordon/policy/concrete_rules.h"

#include <algorithm>

namespace cordon::policy {
namespace {

constexpr std::uint64_t kLow32 = 0xffff'ffffULL;

unsigned arg_index(const std::string& name, unsigned index, ArgLayout layout) {
  // s390's clone(2) swaps its first two arguments (CLONE_BACKWARDS2 in the kernel).
  if (layout == ArgLayout::kS390 && name == "clone" && index <= 1) return 1 - index;
  return index;
}

}  // namespace

std::vector<Low32Block> low32_complement(std::vector<std::uint32_t> excluded) {
  std::sort(excluded.begin(), excluded.end());
  excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());

  std::vector<Low32Block> blocks;
  // Cover [lo, hi] with maximal aligned power-of-two blocks, as CIDR does for ranges.
  const auto cover = [&blocks](std::uint64_t lo, std::uint64_t hi) {
    while (lo <= hi) {
      std::uint64_t size = lo == 0 ? (kLow32 + 1) : (lo & (~lo + 1));  // alignment of lo
      while (lo + size - 1 > hi) size >>= 1;
      blocks.push_back(
          {static_cast<std::uint32_t>(~(size - 1) & kLow32), static_cast<std::uint32_t>(lo)});
      lo += size;
    }
  };
  std::uint64_t next = 0;
  for (std::uint32_t point : excluded) {
    if (point > next) cover(next, std::uint64_t{point} - 1);
    next = std::uint64_t{point} + 1;
  }
  if (next <= kLow32) cover(next, kLow32);
  return blocks;
}

std::vector<ConcreteRule> expand_rules(const SyscallPolicy& policy, ArgLayout layout) {
  std::vector<const SyscallRule*> sorted;
  sorted.reserve(policy.rules.size());
  for (const SyscallRule& rule : policy.rules) sorted.push_back(&rule);
  std::sort(sorted.begin(), sorted.end(),
            [](const SyscallRule* a, const SyscallRule* b) { return a->name < b->name; });

  std::vector<ConcreteRule> out;
  for (const SyscallRule* rule : sorted) {
    if (!rule->when) {
      out.push_back({rule->name, rule->verdict, std::nullopt});
      continue;
    }
    const ArgCondition& c = *rule->when;
    const unsigned index = arg_index(rule->name, c.index, layout);
    if (c.match == ArgCondition::Match::kAnyBitSet) {
      // None of the bits set -> otherwise; each bit set -> on_match. The on_match rules
      // overlap one another, but only with the same verdict.
      out.push_back({rule->name, rule->verdict, MaskedEq{index, c.mask, 0}});
      for (std::uint64_t bits = c.mask; bits != 0; bits &= bits - 1) {
        const std::uint64_t bit = bits & (~bits + 1);
        out.push_back({rule->name, c.on_match, MaskedEq{index, bit, bit}});
      }
      continue;
    }
    // kLow32In: the listed values, then aligned blocks covering every other value. Masks
    // leave the upper 32 bits out, exactly as the kernel ignores them.
    std::vector<std::uint32_t> values = c.values;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (std::uint32_t v : values) {
      out.push_back({rule->name, c.on_match, MaskedEq{index, kLow32, v}});
    }
    for (const Low32Block& block : low32_complement(values)) {
      out.push_back({rule->name, rule->verdict, MaskedEq{index, block.mask, block.value}});
    }
  }
  return out;
}

}  // namespace cordon::policy
