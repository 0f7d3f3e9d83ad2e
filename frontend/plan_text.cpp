#include "frontend/plan_text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string_view>

#include "cordon/backend.h"
#include "cordon/limit_check.h"
#include "cordon/result_json.h"
#include "cordon/text.h"
#include "cordon/units.h"

namespace cordon::frontend {
namespace {

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text + " ";
}

// "size=67108864,mode=1777" -> "size 64 MiB, mode 1777".
std::string readable_mount_options(std::string_view options) {
  std::string out;
  while (!options.empty()) {
    const std::size_t comma = options.find(',');
    std::string_view item = options.substr(0, comma);
    options = comma == std::string_view::npos ? std::string_view() : options.substr(comma + 1);
    if (!out.empty()) out += ", ";
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      out += item;
      continue;
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    std::uint64_t bytes = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
    if (key == "size" && ec == std::errc() && ptr == value.data() + value.size()) {
      out += "size " + format_size(bytes);
    } else {
      out += std::string(key) + " " + std::string(value);
    }
  }
  return out;
}

bool is_mount_op(std::string_view op) {
  return op != "mkdir" && op != "mkfile" && op != "write_file" && op != "symlink";
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// One mount step per line: "  bind              /usr  from /usr  [ro,nosuid,nodev]".
std::string mount_line(const PlanStep& step) {
  std::string line = "  " + padded(step.op, 17) + padded(step.target, 22);
  std::string detail;
  if (!step.source.empty()) detail = "from " + step.source;
  if (!step.options.empty()) {
    if (!detail.empty()) detail += "; ";
    detail += readable_mount_options(step.options);
  }
  if (step.op == "bind" || step.op == "tmpfs" || step.op == "proc" || step.op == "root") {
    std::string flags = joined(step.flags, ",");
    if (!flags.starts_with("ro")) flags = flags.empty() ? "rw" : "rw," + flags;
    if (!detail.empty()) detail += " ";
    detail += "[" + flags + "]";
  }
  if (step.optional) detail += detail.empty() ? "(if present)" : " (if present)";
  line += detail;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

void render_filesystem(const Plan& plan, std::string& out) {
  // Absent is not "none": a plan that does not say must not read as the host's filesystem.
  if (!plan.filesystem) {
    out += "mounts: not stated by this backend's plan\n";
    return;
  }
  if (!*plan.filesystem) {
    out += "mounts: none (the code sees the host's filesystem as it is)\n";
    return;
  }
  out += "mounts (in order):\n";
  std::size_t mount_points = 0;
  std::string files;
  for (const PlanStep& step : (*plan.filesystem)->steps) {
    if (is_mount_op(step.op)) {
      out += mount_line(step);
    } else if (step.op == "write_file") {
      files += "  " + padded(step.target, 22) + std::to_string(step.contents.size()) +
               " bytes, mode " + step.mode + "\n";
    } else if (step.op == "symlink") {
      files += "  " + padded(step.target, 22) + "-> " + step.source + "\n";
    } else {
      ++mount_points;
    }
  }
  out += "files written into the new root (" + std::to_string(mount_points) +
         " mount points and directories besides):\n" + files;
}

std::string counts_text(const std::optional<SyscallRuleCounts>& rules) {
  if (!rules) return "rule counts unknown (a policy cordon does not know by its hash)";
  return std::to_string(rules->allowed) + " syscalls allowed, " +
         std::to_string(rules->by_argument) + " allowed or denied by argument, " +
         std::to_string(rules->denied + rules->killed) +
         " denied explicitly, every other syscall " +
         (rules->otherwise.empty() ? std::string("?") : rules->otherwise);
}

void render_seccomp(const Plan& plan, std::string& out) {
  if (!plan.seccomp) {
    out += "seccomp: none (no syscall filter)\n";
    return;
  }
  const PlanSeccomp& seccomp = *plan.seccomp;
  out += "seccomp: policy " + seccomp.policy + " v" + std::to_string(seccomp.version) + ", " +
         seccomp.hash + "\n";
  out += "  " + counts_text(seccomp.rules) + "\n";
}

void render_limits(const Plan& plan, std::string& out) {
  out += "limits:\n";
  if (plan.limits.empty()) {
    out += "  none\n";
    return;
  }
  for (const PlanLimit& limit : plan.limits) {
    std::string line = "  " + padded(std::string(to_string(limit.aspect)), 10) +
                       padded(limit.value.value_or("-"), 18) + "by " + limit.by;
    if (limit.enforcement != Enforcement::kEnforced) {
      line += " (" + std::string(to_string(limit.enforcement)) + ")";
    }
    // A ceiling the backend applies though the request asked for none.
    if (limit.is_default) line += " (default)";
    out += line + "\n";
  }
}

bool is_limit_aspect(Aspect aspect) {
  return aspect == Aspect::kMemory || aspect == Aspect::kProcesses || aspect == Aspect::kCpu ||
         aspect == Aspect::kDisk || aspect == Aspect::kOutput;
}

bool is_isolation_aspect(Aspect aspect) {
  return std::ranges::find(kIsolationAspects, aspect) != std::end(kIsolationAspects);
}

// What a request may ask for each limit, from the backend's declared ranges (the plan's
// aspects); a limit aspect with no range cannot be limited by this backend at all.
void render_accepted(const Plan& plan, std::string& out) {
  if (!plan.aspects) return;
  std::string lines;
  std::string refused;
  for (const Capability& c : plan.aspects->aspects) {
    if (!is_limit_aspect(c.aspect)) continue;
    const std::string name(to_string(c.aspect));
    if (c.range) {
      lines += "  " + padded(name, 10) + format_range(c.aspect, *c.range) + "\n";
    } else {
      refused += (refused.empty() ? "" : ", ") + name;
    }
  }
  if (lines.empty() && refused.empty()) return;
  out += "accepted limit values (others are refused before anything runs):\n" + lines;
  if (!refused.empty()) out += "  cannot be limited here (asking is refused): " + refused + "\n";
}

std::string rlimit_value(std::uint64_t value) {
  if (value == std::numeric_limits<std::uint64_t>::max()) return "unlimited";
  return std::to_string(value);
}

void render_rlimits(const Plan& plan, std::string& out) {
  if (plan.rlimits.empty()) return;
  out += "rlimits (soft/hard):\n";
  for (const PlanRlimit& r : plan.rlimits) {
    out += "  " + padded(r.resource, 16) + rlimit_value(r.soft) + "/" + rlimit_value(r.hard) + "\n";
  }
}

void render_isolation(const Plan& plan, std::string& out) {
  if (plan.isolates.value_or(false)) {
    out += "isolation: enforced (network, filesystem, environment, process tree)\n";
    return;
  }
  std::string missing;
  if (plan.aspects) {
    for (const Capability& c : plan.aspects->aspects) {
      if (is_isolation_aspect(c.aspect) && c.enforcement != Enforcement::kEnforced) {
        missing += (missing.empty() ? "" : ", ") + std::string(to_string(c.aspect));
      }
    }
  }
  out +=
      "isolation: no isolation — not enforced: " + (missing.empty() ? "unknown" : missing) + "\n";
}

void render_process(const Plan& plan, std::string& out) {
  std::string names = "not stated by this backend's plan";
  if (plan.namespaces) names = plan.namespaces->empty() ? "none" : joined(*plan.namespaces, " ");
  out += "namespaces: " + names + "\n";
  if (plan.user) {
    std::string map = plan.uid_map;
    while (!map.empty() && map.back() == '\n') map.pop_back();
    out += "user: uid " + std::to_string(plan.user->uid) + ", gid " +
           std::to_string(plan.user->gid) + (map.empty() ? "" : " (uid_map \"" + map + "\")") +
           "\n";
  }
  if (!plan.hostname.empty()) out += "hostname: " + plan.hostname + "\n";
  if (!plan.network.empty()) out += "network: " + plan.network + "\n";
  if (!plan.linux_capabilities.empty()) {
    out += "linux capabilities: " + plan.linux_capabilities + "\n";
  }
}

void render_command(const Plan& plan, std::string& out) {
  if (plan.argv.empty()) return;
  std::string command = joined(plan.argv, " ");
  // One line: the code's own line breaks and tabs are shown escaped.
  for (std::size_t at = command.find_first_of("\n\t"); at != std::string::npos;
       at = command.find_first_of("\n\t", at + 2)) {
    command.replace(at, 1, command[at] == '\n' ? "\\n" : "\\t");
  }
  constexpr std::size_t kShown = 100;
  if (command.size() > kShown) {
    std::size_t cut = kShown;  // not inside a UTF-8 sequence
    while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0U) == 0x80U) --cut;
    command = command.substr(0, cut) + "…";
  }
  out += "command: " + command + " (in " + plan.cwd + ")\n";
}

}  // namespace

SyscallRuleCounts syscall_rule_counts(const policy::SyscallPolicy& policy) {
  SyscallRuleCounts counts;
  for (const policy::SyscallRule& rule : policy.rules) {
    if (rule.when) {
      ++counts.by_argument;
    } else if (rule.verdict.kind == policy::Verdict::Kind::kAllow) {
      ++counts.allowed;
    } else if (rule.verdict.kind == policy::Verdict::Kind::kKillProcess) {
      ++counts.killed;
    } else {
      ++counts.denied;
    }
  }
  counts.otherwise = "allowed";
  if (policy.default_verdict.kind == policy::Verdict::Kind::kKillProcess) {
    counts.otherwise = "kills the process";
  } else if (policy.default_verdict.kind == policy::Verdict::Kind::kErrno) {
    const int err = policy.default_verdict.errno_value;
    counts.otherwise =
        err == ENOSYS ? "fails with ENOSYS" : "fails with errno " + std::to_string(err);
  }
  return counts;
}

Plan complete_plan(Plan plan, const RunRequest& request, const Capabilities& capabilities) {
  if (!plan.isolates) plan.isolates = capabilities.isolates();
  if (!plan.aspects) plan.aspects = capabilities;
  for (PlanLimit& entry : plan_limits(request, capabilities)) {
    const bool listed = std::ranges::any_of(
        plan.limits, [&](const PlanLimit& have) { return have.aspect == entry.aspect; });
    if (!listed) plan.limits.push_back(std::move(entry));
  }
  // Counts only for a policy identified by its content hash: a name alone could be a
  // different version of it.
  if (plan.seccomp && !plan.seccomp->rules) {
    const policy::SyscallPolicy& known = policy::default_syscall_policy();
    if (plan.seccomp->hash == policy::content_hash(known)) {
      plan.seccomp->rules = syscall_rule_counts(known);
    }
  }
  return plan;
}

std::string render_plan_text(const Plan& plan) {
  std::string out;
  out +=
      "plan of backend " + plan.backend_name + " " + plan.backend_version + " (nothing was run)\n";
  if (!plan.choice_reason.empty()) out += "chosen: " + plan.choice_reason + "\n";
  if (!plan.languages.empty()) out += "languages here: " + join(plan.languages) + "\n";
  render_isolation(plan, out);
  render_process(plan, out);
  render_filesystem(plan, out);
  render_seccomp(plan, out);
  render_limits(plan, out);
  render_accepted(plan, out);
  render_rlimits(plan, out);
  render_command(plan, out);
  return out;
}

}  // namespace cordon::frontend
