// SyscallPolicy -> OCI `linux.seccomp` (runtime-spec config-linux.md#seccomp).
#include "cordon/policy/oci_seccomp.h"

#include <seccomp.h>

#include <map>
#include <tuple>

#include "cordon/policy/concrete_rules.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

// Kill the process (not just the thread) for the actions cordon uses; the spec's string
// constants are libseccomp's macro names.
std::string oci_action(const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kAllow:
      return "SCMP_ACT_ALLOW";
    case Verdict::Kind::kErrno:
      return "SCMP_ACT_ERRNO";
    case Verdict::Kind::kKillProcess:
      return "SCMP_ACT_KILL_PROCESS";
  }
  return "SCMP_ACT_KILL_PROCESS";
}

json entry(std::vector<std::string> names, const Verdict& v) {
  json j = {{"names", std::move(names)}, {"action", oci_action(v)}};
  if (v.kind == Verdict::Kind::kErrno)
    j["errnoRet"] = static_cast<unsigned>(v.errno_value);  // uint in the spec
  return j;
}

ArgLayout native_layout() {
  const std::uint32_t native = seccomp_arch_native();
  return (native == SCMP_ARCH_S390 || native == SCMP_ARCH_S390X) ? ArgLayout::kS390
                                                                 : ArgLayout::kGeneric;
}

}  // namespace

std::string native_oci_arch() {
  switch (seccomp_arch_native()) {
    case SCMP_ARCH_X86_64:
      return "SCMP_ARCH_X86_64";
    case SCMP_ARCH_X86:
      return "SCMP_ARCH_X86";
    case SCMP_ARCH_X32:
      return "SCMP_ARCH_X32";
    case SCMP_ARCH_ARM:
      return "SCMP_ARCH_ARM";
    case SCMP_ARCH_AARCH64:
      return "SCMP_ARCH_AARCH64";
    case SCMP_ARCH_PPC64:
      return "SCMP_ARCH_PPC64";
    case SCMP_ARCH_PPC64LE:
      return "SCMP_ARCH_PPC64LE";
    case SCMP_ARCH_S390:
      return "SCMP_ARCH_S390";
    case SCMP_ARCH_S390X:
      return "SCMP_ARCH_S390X";
    case SCMP_ARCH_RISCV64:
      return "SCMP_ARCH_RISCV64";
    default:
      return "SCMP_ARCH_NATIVE";
  }
}

json to_oci_seccomp(const SyscallPolicy& policy) {
  // Unconditional names grouped per verdict (errno included in the key); conditional
  // rules one entry each. Rules equal to the default are left out: they are redundant,
  // and some runtimes refuse a rule whose action is the default (libseccomp EACCES).
  std::map<std::tuple<int, int>, std::vector<std::string>> plain;  // (kind, errno) -> names
  std::map<std::tuple<int, int>, Verdict> verdicts;
  json conditional = json::array();
  for (const ConcreteRule& rule : expand_rules(policy, native_layout())) {
    if (rule.verdict == policy.default_verdict) continue;
    if (!rule.arg) {
      const auto key =
          std::make_tuple(static_cast<int>(rule.verdict.kind), rule.verdict.errno_value);
      plain[key].push_back(rule.name);
      verdicts[key] = rule.verdict;
      continue;
    }
    json e = entry({rule.name}, rule.verdict);
    e["args"] = json::array({{{"index", rule.arg->index},
                              {"value", rule.arg->mask},
                              {"valueTwo", rule.arg->value},
                              {"op", "SCMP_CMP_MASKED_EQ"}}});
    conditional.push_back(std::move(e));
  }
  json syscalls = json::array();
  for (auto& [key, names] : plain) syscalls.push_back(entry(std::move(names), verdicts[key]));
  for (auto& e : conditional) syscalls.push_back(std::move(e));

  json out = {{"defaultAction", oci_action(policy.default_verdict)},
              {"architectures", json::array({native_oci_arch()})},
              {"syscalls", std::move(syscalls)}};
  if (policy.default_verdict.kind == Verdict::Kind::kErrno) {
    out["defaultErrnoRet"] = static_cast<unsigned>(policy.default_verdict.errno_value);
  }
  return out;
}

}  // namespace cordon::policy
