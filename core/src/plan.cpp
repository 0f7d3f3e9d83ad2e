// The plan's JSON form, written once (plugin side, `cordon plan --json`) and read once
// (loader side): plan.h.
#include "cordon/plan.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "cordon/result_json.h"
#include "json_fields.h"

namespace cordon {
namespace {

using json_fields::enum_named;
using json_fields::first_failure;
using json_fields::member;
using json_fields::read;
using json_fields::unexpected_value;
using nlohmann::json;

// The members plan.h names: `extra` never overrides them, and reading never puts them there.
constexpr std::string_view kKnown[] = {
    "backend", "choice",  "isolates", "timeout_ms", "namespaces",   "filesystem",
    "user",    "uid_map", "hostname", "network",    "capabilities", "seccomp",
    "limits",  "aspects", "rlimits",  "argv",       "cwd",          "languages"};
bool known(std::string_view key) { return std::ranges::find(kKnown, key) != std::end(kKnown); }

Status read_strings(const json& object, std::string_view key, std::vector<std::string>& out) {
  const json* list = member(object, key);
  if (list == nullptr) return {};
  if (!list->is_array()) return std::unexpected(unexpected_value(key, *list));
  for (const json& item : *list) {
    if (!item.is_string()) return std::unexpected(unexpected_value(key, *list));
    out.push_back(item.get<std::string>());
  }
  return {};
}

json step_json(const PlanStep& s) {
  json j = {{"op", s.op}, {"target", s.target}};
  if (!s.source.empty()) j["source"] = s.source;
  if (!s.options.empty()) j["options"] = s.options;
  if (!s.contents.empty()) j["contents"] = s.contents;
  if (!s.mode.empty()) j["mode"] = s.mode;
  if (!s.flags.empty()) j["flags"] = s.flags;
  if (s.optional) j["optional"] = true;
  return j;
}

Result<PlanStep> step_from(const json& in) {
  if (!in.is_object()) return std::unexpected(unexpected_value("filesystem.steps", in));
  PlanStep s;
  if (Status st =
          first_failure({read(in, "op", s.op), read(in, "target", s.target),
                         read(in, "source", s.source), read(in, "options", s.options),
                         read(in, "contents", s.contents), read(in, "mode", s.mode),
                         read_strings(in, "flags", s.flags), read(in, "optional", s.optional)});
      !st) {
    return std::unexpected(st.error());
  }
  return s;
}

Result<PlanFilesystem> filesystem_from(const json& in) {
  if (!in.is_object()) return std::unexpected(unexpected_value("filesystem", in));
  PlanFilesystem fs;
  for (const auto& [key, value] : in.items()) {
    if (key != "steps") fs.extra[key] = value;
  }
  if (const json* steps = member(in, "steps")) {
    if (!steps->is_array()) return std::unexpected(unexpected_value("filesystem.steps", *steps));
    for (const json& step : *steps) {
      Result<PlanStep> s = step_from(step);
      if (!s) return std::unexpected(s.error());
      fs.steps.push_back(std::move(*s));
    }
  }
  return fs;
}

json seccomp_json(const PlanSeccomp& s) {
  json j = {{"policy", s.policy}, {"version", s.version}, {"hash", s.hash}};
  if (s.rules) {
    j["rules"] = {{"allowed", s.rules->allowed},
                  {"by_argument", s.rules->by_argument},
                  {"denied", s.rules->denied},
                  {"killed", s.rules->killed},
                  {"otherwise", s.rules->otherwise}};
  }
  return j;
}

Result<PlanSeccomp> seccomp_from(const json& in) {
  if (!in.is_object()) return std::unexpected(unexpected_value("seccomp", in));
  PlanSeccomp s;
  if (Status st = first_failure(
          {read(in, "policy", s.policy), read(in, "version", s.version), read(in, "hash", s.hash)});
      !st) {
    return std::unexpected(st.error());
  }
  if (const json* rules = member(in, "rules")) {
    SyscallRuleCounts r;
    if (!rules->is_object()) return std::unexpected(unexpected_value("seccomp.rules", *rules));
    if (Status st = first_failure(
            {read(*rules, "allowed", r.allowed), read(*rules, "by_argument", r.by_argument),
             read(*rules, "denied", r.denied), read(*rules, "killed", r.killed),
             read(*rules, "otherwise", r.otherwise)});
        !st) {
      return std::unexpected(st.error());
    }
    s.rules = std::move(r);
  }
  return s;
}

json limit_json(const PlanLimit& l) {
  json j = {{std::string(to_string(l.aspect)), l.value ? json(*l.value) : json(nullptr)},
            {"by", l.by},
            {"enforcement", to_string(l.enforcement)}};
  if (l.is_default) j["default"] = true;
  return j;
}

// {"<aspect>": value, "by": ..., "enforcement": ..., "default": true}: the aspect is the
// member that names one.
Result<PlanLimit> limit_from(const json& in) {
  if (!in.is_object()) return std::unexpected(unexpected_value("limits", in));
  PlanLimit l;
  bool named = false;
  for (const Aspect aspect : kAllAspects) {
    const auto it = in.find(std::string(to_string(aspect)));
    if (it == in.end()) continue;
    if (named || !(it->is_string() || it->is_null())) {
      return std::unexpected(unexpected_value("limits", in));
    }
    named = true;
    l.aspect = aspect;
    if (it->is_string()) l.value = it->get<std::string>();
  }
  if (!named) return std::unexpected(unexpected_value("limits", in));
  std::string enforcement = "none";
  if (Status st = first_failure({read(in, "by", l.by), read(in, "enforcement", enforcement),
                                 read(in, "default", l.is_default)});
      !st) {
    return std::unexpected(st.error());
  }
  const std::optional<Enforcement> level = enum_named(kAllEnforcements, enforcement);
  if (!level) return std::unexpected(unexpected_value("enforcement", in["enforcement"]));
  l.enforcement = *level;
  return l;
}

Result<PlanRlimit> rlimit_from(const json& in) {
  if (!in.is_object()) return std::unexpected(unexpected_value("rlimits", in));
  PlanRlimit r;
  if (Status st = first_failure(
          {read(in, "resource", r.resource), read(in, "soft", r.soft), read(in, "hard", r.hard)});
      !st) {
    return std::unexpected(st.error());
  }
  return r;
}

// Each member of the array `key`, read by `one` into `out`.
template <typename T, typename Read>
Status read_list(const json& in, std::string_view key, std::vector<T>& out, Read one) {
  const json* list = member(in, key);
  if (list == nullptr) return {};
  if (!list->is_array()) return std::unexpected(unexpected_value(key, *list));
  for (const json& item : *list) {
    Result<T> value = one(item);
    if (!value) return std::unexpected(value.error());
    out.push_back(std::move(*value));
  }
  return {};
}

}  // namespace

json to_json(const Plan& plan) {
  json j = json::object();
  j["backend"] = {{"name", plan.backend_name}, {"version", plan.backend_version}};
  if (!plan.choice_requested.empty() || !plan.choice_reason.empty()) {
    j["choice"] = {{"requested", plan.choice_requested}, {"reason", plan.choice_reason}};
  }
  if (plan.isolates) j["isolates"] = *plan.isolates;
  if (!plan.languages.empty()) j["languages"] = plan.languages;
  if (plan.timeout_ms) j["timeout_ms"] = *plan.timeout_ms;
  if (plan.namespaces) j["namespaces"] = *plan.namespaces;
  if (plan.filesystem) {
    if (*plan.filesystem) {
      json fs = (*plan.filesystem)->extra.is_object() ? (*plan.filesystem)->extra : json::object();
      json steps = json::array();
      for (const PlanStep& s : (*plan.filesystem)->steps) steps.push_back(step_json(s));
      fs["steps"] = std::move(steps);
      j["filesystem"] = std::move(fs);
    } else {
      j["filesystem"] = nullptr;
    }
  }
  if (plan.user) j["user"] = {{"uid", plan.user->uid}, {"gid", plan.user->gid}};
  if (!plan.uid_map.empty()) j["uid_map"] = plan.uid_map;
  if (!plan.hostname.empty()) j["hostname"] = plan.hostname;
  if (!plan.network.empty()) j["network"] = plan.network;
  if (!plan.linux_capabilities.empty()) j["capabilities"] = plan.linux_capabilities;
  j["seccomp"] = plan.seccomp ? seccomp_json(*plan.seccomp) : json(nullptr);
  json limits = json::array();
  for (const PlanLimit& l : plan.limits) limits.push_back(limit_json(l));
  j["limits"] = std::move(limits);
  if (plan.aspects) j["aspects"] = to_json(*plan.aspects);
  if (!plan.rlimits.empty()) {
    json rlimits = json::array();
    for (const PlanRlimit& r : plan.rlimits) {
      rlimits.push_back({{"resource", r.resource}, {"soft", r.soft}, {"hard", r.hard}});
    }
    j["rlimits"] = std::move(rlimits);
  }
  if (!plan.argv.empty()) j["argv"] = plan.argv;
  if (!plan.cwd.empty()) j["cwd"] = plan.cwd;
  if (plan.extra.is_object()) {
    for (const auto& [key, value] : plan.extra.items()) {
      if (!known(key)) j[key] = value;
    }
  }
  return j;
}

Result<Plan> plan_from_json(const json& in) {
  if (!in.is_object()) return fail(ErrorCode::kInvalidArgument, "a plan is a JSON object");
  Plan plan;
  if (const json* backend = member(in, "backend")) {
    if (!backend->is_object()) return std::unexpected(unexpected_value("backend", *backend));
    if (Status st = first_failure({read(*backend, "name", plan.backend_name),
                                   read(*backend, "version", plan.backend_version)});
        !st) {
      return std::unexpected(st.error());
    }
  }
  if (const json* choice = member(in, "choice")) {
    if (!choice->is_object()) return std::unexpected(unexpected_value("choice", *choice));
    if (Status st = first_failure({read(*choice, "requested", plan.choice_requested),
                                   read(*choice, "reason", plan.choice_reason)});
        !st) {
      return std::unexpected(st.error());
    }
  }
  bool isolates = false;
  std::optional<std::int64_t> timeout_ms;
  if (Status st = first_failure(
          {read(in, "isolates", isolates), read(in, "timeout_ms", timeout_ms),
           read(in, "uid_map", plan.uid_map), read(in, "hostname", plan.hostname),
           read(in, "network", plan.network), read(in, "capabilities", plan.linux_capabilities),
           read(in, "cwd", plan.cwd), read_strings(in, "argv", plan.argv),
           read_strings(in, "languages", plan.languages),
           read_list(in, "limits", plan.limits, limit_from),
           read_list(in, "rlimits", plan.rlimits, rlimit_from)});
      !st) {
    return std::unexpected(st.error());
  }
  if (member(in, "isolates") != nullptr) plan.isolates = isolates;
  plan.timeout_ms = timeout_ms;
  if (member(in, "namespaces") != nullptr) {
    plan.namespaces.emplace();
    if (Status st = read_strings(in, "namespaces", *plan.namespaces); !st) {
      return std::unexpected(st.error());
    }
  }
  // Present as null: the plan says there is no filesystem of the sandbox's own.
  if (in.contains("filesystem")) {
    if (in["filesystem"].is_null()) {
      plan.filesystem.emplace(std::nullopt);
    } else {
      Result<PlanFilesystem> fs = filesystem_from(in["filesystem"]);
      if (!fs) return std::unexpected(fs.error());
      plan.filesystem.emplace(std::move(*fs));
    }
  }
  if (const json* user = member(in, "user")) {
    if (!user->is_object()) return std::unexpected(unexpected_value("user", *user));
    PlanUser u;
    if (Status st = first_failure({read(*user, "uid", u.uid), read(*user, "gid", u.gid)}); !st) {
      return std::unexpected(st.error());
    }
    plan.user = u;
  }
  if (const json* seccomp = member(in, "seccomp")) {
    Result<PlanSeccomp> s = seccomp_from(*seccomp);
    if (!s) return std::unexpected(s.error());
    plan.seccomp = std::move(*s);
  }
  if (const json* aspects = member(in, "aspects")) {
    Result<Capabilities> caps = capabilities_from_json(*aspects);
    if (!caps) return std::unexpected(caps.error());
    plan.aspects = std::move(*caps);
  }
  for (const auto& [key, value] : in.items()) {
    if (!known(key)) plan.extra[key] = value;
  }
  return plan;
}

}  // namespace cordon
