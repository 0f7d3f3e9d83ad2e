#include "frontend/plan_text.h"

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>

#include "cordon/backend.h"
#include "cordon/result_json.h"
#include "cordon/units.h"

namespace cordon::frontend {
namespace {

using nlohmann::json;

// A string member, or "" when it is missing or not a string (plans are backend data:
// the renderer never throws on a shape it did not expect).
std::string str(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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

std::string flag_list(const json& step) {
  std::string flags;
  const auto it = step.find("flags");
  if (it == step.end() || !it->is_array()) return flags;
  for (const json& flag : *it) {
    if (!flag.is_string()) continue;
    if (!flags.empty()) flags += ",";
    flags += flag.get<std::string>();
  }
  return flags;
}

// One mount step per line: "  bind              /usr  from /usr  [ro,nosuid,nodev]".
std::string mount_line(const json& step) {
  const std::string op = str(step, "op");
  std::string line = "  " + padded(op, 17) + padded(str(step, "target"), 22);
  std::string detail;
  if (const std::string source = str(step, "source"); !source.empty()) detail = "from " + source;
  if (const std::string options = str(step, "options"); !options.empty()) {
    if (!detail.empty()) detail += "; ";
    detail += readable_mount_options(options);
  }
  if (op == "bind" || op == "tmpfs" || op == "proc" || op == "root") {
    std::string flags = flag_list(step);
    if (!flags.starts_with("ro")) flags = flags.empty() ? "rw" : "rw," + flags;
    if (!detail.empty()) detail += " ";
    detail += "[" + flags + "]";
  }
  if (step.value("optional", false)) detail += detail.empty() ? "(if present)" : " (if present)";
  line += detail;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

void render_filesystem(const json& plan, std::string& out) {
  // Absent is not "none": a plan that does not say must not read as the host's filesystem.
  if (!plan.contains("filesystem")) {
    out += "mounts: not stated by this backend's plan\n";
    return;
  }
  const json& fs = plan["filesystem"];
  if (!fs.is_object() || !fs.contains("steps") || !fs["steps"].is_array()) {
    out += "mounts: none (the code sees the host's filesystem as it is)\n";
    return;
  }
  out += "mounts (in order):\n";
  std::size_t mount_points = 0;
  std::string files;
  for (const json& step : fs["steps"]) {
    const std::string op = str(step, "op");
    if (is_mount_op(op)) {
      out += mount_line(step);
    } else if (op == "write_file") {
      files += "  " + padded(str(step, "target"), 22) +
               std::to_string(str(step, "contents").size()) + " bytes, mode " + str(step, "mode") +
               "\n";
    } else if (op == "symlink") {
      files += "  " + padded(str(step, "target"), 22) + "-> " + str(step, "source") + "\n";
    } else {
      ++mount_points;
    }
  }
  out += "files written into the new root (" + std::to_string(mount_points) +
         " mount points and directories besides):\n" + files;
}

std::string counts_text(const json& rules) {
  if (!rules.is_object()) return "rule counts unknown (a policy cordon does not know by its hash)";
  return std::to_string(rules.value("allowed", 0)) + " syscalls allowed, " +
         std::to_string(rules.value("by_argument", 0)) + " allowed or denied by argument, " +
         std::to_string(rules.value("denied", 0) + rules.value("killed", 0)) +
         " denied explicitly, every other syscall " + rules.value("otherwise", std::string("?"));
}

void render_seccomp(const json& plan, std::string& out) {
  const json& seccomp = plan.contains("seccomp") ? plan["seccomp"] : json();
  if (!seccomp.is_object()) {
    out += "seccomp: none (no syscall filter)\n";
    return;
  }
  out += "seccomp: policy " + str(seccomp, "policy") + " v" +
         std::to_string(seccomp.value("version", 0)) + ", " + str(seccomp, "hash") + "\n";
  out += "  " + counts_text(seccomp.contains("rules") ? seccomp["rules"] : json()) + "\n";
}

// The aspect a limit entry is about: its key that names an aspect ("memory"), whatever
// else the backend puts beside "by" ("enforcement", "default", ...).
std::string limit_aspect(const json& entry) {
  if (!entry.is_object()) return {};
  for (const Aspect aspect : kAllAspects) {
    if (std::string name(to_string(aspect)); entry.contains(name)) return name;
  }
  return {};
}

std::string scalar_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "-";
  return value.dump();
}

void render_limits(const json& plan, std::string& out) {
  out += "limits:\n";
  const auto it = plan.find("limits");
  if (it == plan.end() || !it->is_array() || it->empty()) {
    out += "  none\n";
    return;
  }
  for (const json& entry : *it) {
    if (!entry.is_object()) continue;
    const std::string aspect = limit_aspect(entry);
    if (aspect.empty()) continue;
    std::string line = "  " + padded(aspect, 10) + padded(scalar_text(entry[aspect]), 18) + "by " +
                       str(entry, "by");
    if (const std::string level = str(entry, "enforcement");
        !level.empty() && level != "enforced") {
      line += " (" + level + ")";
    }
    // A ceiling the backend applies though the request asked for none.
    if (entry.value("default", false)) line += " (default)";
    out += line + "\n";
  }
}

// What a request may ask for each limit, from the backend's declared ranges (the plan's
// "aspects"); a limit aspect with no range cannot be limited by this backend at all.
void render_accepted(const json& plan, std::string& out) {
  const auto it = plan.find("aspects");
  if (it == plan.end() || !it->is_array()) return;
  std::string lines;
  std::string refused;
  for (const json& aspect : *it) {
    if (!aspect.is_object()) continue;
    const std::string name = str(aspect, "aspect");
    const bool limit = name == "memory" || name == "processes" || name == "cpu" || name == "disk" ||
                       name == "output";
    if (!limit) continue;
    if (const auto range = aspect.find("range"); range != aspect.end() && range->is_object()) {
      lines += "  " + padded(name, 10) + str(*range, "text") + "\n";
    } else {
      refused += (refused.empty() ? "" : ", ") + name;
    }
  }
  if (lines.empty() && refused.empty()) return;
  out += "accepted limit values (others are refused before anything runs):\n" + lines;
  if (!refused.empty()) out += "  cannot be limited here (asking is refused): " + refused + "\n";
}

std::string rlimit_value(const json& value) {
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() == std::numeric_limits<std::uint64_t>::max()) {
    return "unlimited";
  }
  return scalar_text(value);
}

void render_rlimits(const json& plan, std::string& out) {
  const auto it = plan.find("rlimits");
  if (it == plan.end() || !it->is_array() || it->empty()) return;
  out += "rlimits (soft/hard):\n";
  for (const json& r : *it) {
    if (!r.is_object()) continue;
    out += "  " + padded(str(r, "resource"), 16) + rlimit_value(r.value("soft", json())) + "/" +
           rlimit_value(r.value("hard", json())) + "\n";
  }
}

void render_isolation(const json& plan, std::string& out) {
  if (plan.value("isolates", false)) {
    out += "isolation: enforced (network, filesystem, environment, process tree)\n";
    return;
  }
  std::string missing;
  const auto aspects = plan.find("aspects");
  if (aspects != plan.end() && aspects->is_array()) {
    for (const json& a : *aspects) {
      const std::string name = str(a, "aspect");
      const bool isolation = name == "network" || name == "filesystem" || name == "environment" ||
                             name == "process_tree";
      if (isolation && str(a, "enforcement") != "enforced") {
        missing += (missing.empty() ? "" : ", ") + name;
      }
    }
  }
  out +=
      "isolation: no isolation — not enforced: " + (missing.empty() ? "unknown" : missing) + "\n";
}

void render_process(const json& plan, std::string& out) {
  const auto ns = plan.find("namespaces");
  std::string names;
  if (ns != plan.end() && ns->is_array()) {
    for (const json& n : *ns) names += (names.empty() ? "" : " ") + scalar_text(n);
  }
  if (ns == plan.end()) names = "not stated by this backend's plan";
  out += "namespaces: " + (names.empty() ? std::string("none") : names) + "\n";
  if (plan.contains("user") && plan["user"].is_object()) {
    std::string map = str(plan, "uid_map");
    while (!map.empty() && map.back() == '\n') map.pop_back();
    out += "user: uid " + scalar_text(plan["user"].value("uid", json())) + ", gid " +
           scalar_text(plan["user"].value("gid", json())) +
           (map.empty() ? "" : " (uid_map \"" + map + "\")") + "\n";
  }
  if (const std::string host = str(plan, "hostname"); !host.empty()) {
    out += "hostname: " + host + "\n";
  }
  if (const std::string net = str(plan, "network"); !net.empty()) out += "network: " + net + "\n";
  if (const std::string caps = str(plan, "capabilities"); !caps.empty()) {
    out += "linux capabilities: " + caps + "\n";
  }
}

void render_command(const json& plan, std::string& out) {
  const auto argv = plan.find("argv");
  if (argv == plan.end() || !argv->is_array()) return;
  std::string command;
  for (const json& arg : *argv) command += (command.empty() ? "" : " ") + scalar_text(arg);
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
  out += "command: " + command + " (in " + str(plan, "cwd") + ")\n";
}

}  // namespace

json syscall_rule_counts(const policy::SyscallPolicy& policy) {
  int allowed = 0;
  int by_argument = 0;
  int denied = 0;
  int killed = 0;
  for (const policy::SyscallRule& rule : policy.rules) {
    if (rule.when) {
      ++by_argument;
    } else if (rule.verdict.kind == policy::Verdict::Kind::kAllow) {
      ++allowed;
    } else if (rule.verdict.kind == policy::Verdict::Kind::kKillProcess) {
      ++killed;
    } else {
      ++denied;
    }
  }
  std::string otherwise = "allowed";
  if (policy.default_verdict.kind == policy::Verdict::Kind::kKillProcess) {
    otherwise = "kills the process";
  } else if (policy.default_verdict.kind == policy::Verdict::Kind::kErrno) {
    const int err = policy.default_verdict.errno_value;
    otherwise = err == ENOSYS ? "fails with ENOSYS" : "fails with errno " + std::to_string(err);
  }
  return {{"allowed", allowed},
          {"by_argument", by_argument},
          {"denied", denied},
          {"killed", killed},
          {"otherwise", otherwise}};
}

json complete_plan(json plan, const RunRequest& request, const Capabilities& capabilities) {
  if (!plan.is_object()) plan = json::object();
  if (!plan.contains("isolates")) plan["isolates"] = capabilities.isolates();
  if (!plan.contains("aspects")) plan["aspects"] = to_json(capabilities);
  if (!plan.contains("limits") || !plan["limits"].is_array()) plan["limits"] = json::array();
  for (const json& entry : plan_limits(request, capabilities)) {
    const std::string aspect = limit_aspect(entry);
    bool listed = false;
    for (const json& have : plan["limits"])
      listed = listed || (have.is_object() && have.contains(aspect));
    if (!listed) plan["limits"].push_back(entry);
  }
  json& seccomp = plan["seccomp"];
  if (seccomp.is_object() && !seccomp.contains("rules")) {
    // Counts only for a policy identified by its content hash: a name alone could be a
    // different version of it.
    const policy::SyscallPolicy& known = policy::default_syscall_policy();
    if (str(seccomp, "hash") == policy::content_hash(known)) {
      seccomp["rules"] = syscall_rule_counts(known);
    }
  }
  return plan;
}

std::string render_plan_text(const json& plan) {
  std::string out;
  const json backend = plan.value("backend", json::object());
  out += "plan of backend " + str(backend, "name") + " " + str(backend, "version") +
         " (nothing was run)\n";
  if (const std::string why = str(plan.value("choice", json::object()), "reason"); !why.empty()) {
    out += "chosen: " + why + "\n";
  }
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
