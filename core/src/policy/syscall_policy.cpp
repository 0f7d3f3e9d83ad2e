// Validation and the canonical JSON form of a SyscallPolicy.
#include "cordon/policy/syscall_policy.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cordon/json_number.h"
#include "cordon/sha256.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

constexpr int kMaxErrno = 4095;  // the kernel's MAX_ERRNO: SECCOMP_RET_DATA is wider
constexpr std::size_t kMaxConditionValues = 16;

bool well_formed_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Status check_verdict(const Verdict& v, const std::string& where) {
  if (v.kind == Verdict::Kind::kErrno && (v.errno_value < 1 || v.errno_value > kMaxErrno)) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": errno " + std::to_string(v.errno_value) + " outside 1..4095");
  }
  if (v.kind != Verdict::Kind::kErrno && v.errno_value != 0) {
    return fail(ErrorCode::kInvalidArgument, where + ": errno given for a non-errno action");
  }
  return {};
}

json verdict_json(const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kAllow:
      return {{"action", "allow"}};
    case Verdict::Kind::kErrno:
      return {{"action", "errno"}, {"errno", v.errno_value}};
    case Verdict::Kind::kKillProcess:
      return {{"action", "kill_process"}};
  }
  return {};
}

Result<Verdict> verdict_from(const json& j) {
  if (!j.is_object() || !j.contains("action") || !j["action"].is_string()) {
    return fail(ErrorCode::kInvalidArgument, "verdict: expected {\"action\": ...}");
  }
  const std::string action = j["action"].get<std::string>();
  if (action == "allow") return Verdict::allow();
  if (action == "kill_process") return Verdict::kill_process();
  if (action == "errno" && j.contains("errno")) {
    if (const auto err = json_integer<int>(j["errno"])) return Verdict::error(*err);
  }
  return fail(ErrorCode::kInvalidArgument, "verdict: unknown action or missing errno");
}

json condition_json(const SyscallRule& rule) {
  const ArgCondition& c = *rule.when;
  json j = {{"name", rule.name},
            {"arg", c.index},
            {"on_match", verdict_json(c.on_match)},
            {"otherwise", verdict_json(rule.verdict)}};
  if (c.match == ArgCondition::Match::kAnyBitSet) {
    j["match"] = "any_bit_set";
    j["mask"] = c.mask;
  } else {
    std::vector<std::uint32_t> values = c.values;
    std::sort(values.begin(), values.end());
    j["match"] = "low32_in";
    j["values"] = values;
  }
  return j;
}

}  // namespace

Status validate(const SyscallPolicy& policy) {
  const bool name_ok =
      !policy.name.empty() && std::all_of(policy.name.begin(), policy.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      });
  if (!name_ok) {
    return fail(ErrorCode::kInvalidArgument, "policy: name must be [a-z0-9_-]+");
  }
  if (policy.version < 1) return fail(ErrorCode::kInvalidArgument, "policy: version must be >= 1");
  if (policy.default_verdict.kind == Verdict::Kind::kAllow) {
    return fail(ErrorCode::kInvalidArgument, "policy: default action allow is not an allow-list");
  }
  if (policy.foreign_arch.kind == Verdict::Kind::kAllow) {
    return fail(ErrorCode::kInvalidArgument, "policy: foreign architectures must not be allowed");
  }
  if (auto s = check_verdict(policy.default_verdict, "default"); !s) return s;
  if (auto s = check_verdict(policy.foreign_arch, "foreign_arch"); !s) return s;

  std::set<std::string> seen;
  for (const SyscallRule& rule : policy.rules) {
    if (!well_formed_name(rule.name)) {
      return fail(ErrorCode::kInvalidArgument, "policy: bad syscall name '" + rule.name + "'");
    }
    if (!seen.insert(rule.name).second) {
      return fail(ErrorCode::kInvalidArgument, "policy: syscall '" + rule.name + "' listed twice");
    }
    if (auto s = check_verdict(rule.verdict, rule.name); !s) return s;
    if (!rule.when) continue;
    const ArgCondition& c = *rule.when;
    if (auto s = check_verdict(c.on_match, rule.name); !s) return s;
    if (c.index > 5) return fail(ErrorCode::kInvalidArgument, rule.name + ": argument index > 5");
    if (c.on_match == rule.verdict) {
      return fail(ErrorCode::kInvalidArgument, rule.name + ": condition changes nothing");
    }
    if (c.match == ArgCondition::Match::kAnyBitSet && (c.mask == 0 || !c.values.empty())) {
      return fail(ErrorCode::kInvalidArgument, rule.name + ": any_bit_set needs a mask only");
    }
    if (c.match == ArgCondition::Match::kLow32In &&
        (c.mask != 0 || c.values.empty() || c.values.size() > kMaxConditionValues)) {
      return fail(ErrorCode::kInvalidArgument, rule.name + ": low32_in needs 1..16 values");
    }
  }
  return {};
}

json to_json(const SyscallPolicy& policy) {
  std::vector<std::string> allow;
  std::map<int, std::vector<std::string>> errno_names;  // errno -> names
  std::vector<std::string> kill;
  std::vector<json> conditional;
  std::vector<SyscallRule> rules = policy.rules;
  std::sort(rules.begin(), rules.end(),
            [](const SyscallRule& a, const SyscallRule& b) { return a.name < b.name; });
  for (const SyscallRule& rule : rules) {
    if (rule.when) {
      conditional.push_back(condition_json(rule));
      continue;
    }
    switch (rule.verdict.kind) {
      case Verdict::Kind::kAllow:
        allow.push_back(rule.name);
        break;
      case Verdict::Kind::kErrno:
        errno_names[rule.verdict.errno_value].push_back(rule.name);
        break;
      case Verdict::Kind::kKillProcess:
        kill.push_back(rule.name);
        break;
    }
  }
  json deny = json::array();
  for (const auto& [err, names] : errno_names) deny.push_back({{"errno", err}, {"names", names}});
  return {{"name", policy.name},
          {"version", policy.version},
          {"default", verdict_json(policy.default_verdict)},
          {"foreign_arch", verdict_json(policy.foreign_arch)},
          {"allow", allow},
          {"deny", deny},
          {"kill", kill},
          {"conditional", conditional}};
}

std::string canonical_form(const SyscallPolicy& policy) {
  // nlohmann's default object type is a std::map: keys come out sorted.
  return to_json(policy).dump();
}

std::string content_hash(const SyscallPolicy& policy) {
  return "sha256:" + sha256_hex(canonical_form(policy));
}

Result<SyscallPolicy> syscall_policy_from_json(const json& j) {
  const auto bad = [](const std::string& what) {
    return fail(ErrorCode::kInvalidArgument, "syscall policy JSON: " + what);
  };
  try {
    SyscallPolicy p;
    p.name = j.at("name").get<std::string>();
    const auto version = json_integer_member<int>(j, "version");
    if (!version) return bad(version.error().message);
    p.version = *version;
    auto def = verdict_from(j.at("default"));
    if (!def) return std::unexpected(def.error());
    p.default_verdict = *def;
    auto foreign = verdict_from(j.at("foreign_arch"));
    if (!foreign) return std::unexpected(foreign.error());
    p.foreign_arch = *foreign;
    for (const auto& name : j.at("allow"))
      p.rules.push_back({name.get<std::string>(), Verdict::allow(), {}});
    for (const auto& group : j.at("deny")) {
      const auto err = json_integer_member<int>(group, "errno");
      if (!err) return bad(err.error().message);
      for (const auto& name : group.at("names")) {
        p.rules.push_back({name.get<std::string>(), Verdict::error(*err), {}});
      }
    }
    for (const auto& name : j.value("kill", json::array())) {
      p.rules.push_back({name.get<std::string>(), Verdict::kill_process(), {}});
    }
    for (const auto& c : j.at("conditional")) {
      ArgCondition cond;
      const auto arg = json_integer_member<unsigned>(c, "arg");
      if (!arg) return bad(arg.error().message);
      cond.index = *arg;
      const std::string match = c.at("match").get<std::string>();
      if (match == "any_bit_set") {
        cond.match = ArgCondition::Match::kAnyBitSet;
        const auto mask = json_integer_member<std::uint64_t>(c, "mask");
        if (!mask) return bad(mask.error().message);
        cond.mask = *mask;
      } else if (match == "low32_in") {
        cond.match = ArgCondition::Match::kLow32In;
        const json& values = c.at("values");
        if (!values.is_array()) return bad("'values' is not an array");
        for (const json& value : values) {
          const auto v = json_integer<std::uint32_t>(value);
          if (!v) return bad("'values' holds " + value.dump() + ", not a 32-bit unsigned integer");
          cond.values.push_back(*v);
        }
      } else {
        return bad("unknown match '" + match + "'");
      }
      auto on_match = verdict_from(c.at("on_match"));
      if (!on_match) return std::unexpected(on_match.error());
      cond.on_match = *on_match;
      auto otherwise = verdict_from(c.at("otherwise"));
      if (!otherwise) return std::unexpected(otherwise.error());
      p.rules.push_back({c.at("name").get<std::string>(), *otherwise, cond});
    }
    if (auto s = validate(p); !s) return std::unexpected(s.error());
    return p;
  } catch (const json::exception& e) {
    return bad(e.what());
  }
}

}  // namespace cordon::policy
