#include "cordon/claims.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "cordon/limit_check.h"
#include "cordon/units.h"

namespace cordon {
namespace {

std::string param(const Mechanism& m, std::string_view key) {
  for (const auto& [k, v] : m.params) {
    if (k == key) return v;
  }
  return "";
}

std::string bytes_param(const Mechanism& m, std::string_view key) {
  const std::string text = param(m, key);
  std::uint64_t bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  return ec == std::errc() && end == text.data() + text.size() ? format_size(bytes) : text;
}

std::string_view unit_name(Quantity::Unit unit) {
  switch (unit) {
    case Quantity::Unit::kBytes:
      return "bytes";
    case Quantity::Unit::kCount:
      return "count";
    case Quantity::Unit::kMilliseconds:
      return "ms";
    case Quantity::Unit::kCpus:
      return "cpus";
    case Quantity::Unit::kText:
      return "text";
  }
  return "text";
}

}  // namespace

std::string render_mechanism(const Mechanism& m) {
  const std::string& k = m.kind;
  if (k.empty()) return "";
  if (k == "rlimit") {
    const std::string per = param(m, "per");
    if (per == "run_uid") return param(m, "resource") + " (uid of this run only)";
    return param(m, "resource") + " per " + per;
  }
  if (k == "cgroup") {
    if (const std::string files = param(m, "files"); !files.empty()) {
      return "cgroup v" + param(m, "version") + " " + files;
    }
    const std::string controller = param(m, "controller");
    const std::string where =
        param(m, "group") == "container_parent" ? " (container's parent group)" : "";
    if (controller == "cpu") return "cgroup CPU bandwidth" + where;
    return "cgroup " + controller + " limit" + where;
  }
  if (k == "engine") return "engine " + param(m, "flag");
  if (k == "namespace") {
    const std::string type = param(m, "type");
    if (type == "network") return "network namespace with loopback only";
    const std::string runtime = param(m, "runtime");
    return (type == "pid" ? std::string("PID namespace") : type + " namespace") +
           (runtime.empty() ? "" : " (" + runtime + ")");
  }
  if (k == "root_fs") {
    const std::string tmp = ", tmpfs /tmp " + bytes_param(m, "tmpfs_bytes");
    if (const std::string image = param(m, "image"); !image.empty()) {
      return "image " + image + " read-only" + tmp;
    }
    const std::string root = param(m, "root");
    return (root == "fresh" ? std::string("fresh root, /usr read-only")
                            : "root " + root + " read-only") +
           tmp;
  }
  if (k == "clean_environment") {
    return param(m, "mount_namespace") == "yes" ? "clean environment + mount namespace"
                                                : "clean environment";
  }
  if (k == "seccomp") {
    const std::string hash = param(m, "hash");
    return "seccomp " + param(m, "policy") + " v" + param(m, "version") +
           (hash.empty() ? "" : " " + hash);
  }
  if (k == "tmpfs") return "tmpfs size";
  if (k == "capture_cap") return "capture cap per stream";
  if (k == "deadline") {
    const std::string kill = param(m, "kill");
    if (kill == "cgroup.kill") return "deadline + cgroup.kill";
    if (kill == "subreaper_helper") return "deadline + subreaper helper";
    if (kill == "pid_namespace_init") return "deadline + SIGKILL of the PID namespace's init";
    if (kill == "runtime") return "deadline + " + param(m, "runtime") + " kill of the container";
    return "deadline + " + kill;
  }
  if (k == "words") return param(m, "text");
  std::string out = k;
  for (const auto& [key, value] : m.params) out += " " + key + "=" + value;
  return out;
}

Mechanism cgroup_mechanism(std::string_view words) {
  constexpr std::string_view kPrefix = "cgroup v";
  const auto space = words.find(' ', kPrefix.size());
  if (!words.starts_with(kPrefix) || space == std::string_view::npos) {
    return {"words", {{"text", std::string(words)}}};
  }
  return {"cgroup",
          {{"version", std::string(words.substr(kPrefix.size(), space - kPrefix.size()))},
           {"files", std::string(words.substr(space + 1))}}};
}

std::string render_value(const Quantity& v) {
  switch (v.unit) {
    case Quantity::Unit::kBytes:
      return format_size(v.amount);
    case Quantity::Unit::kCount:
      return std::to_string(v.amount);
    case Quantity::Unit::kMilliseconds:
      return format_duration(std::chrono::milliseconds(v.amount));
    case Quantity::Unit::kCpus:
      return v.text + " CPU";
    case Quantity::Unit::kText:
      return v.text;
  }
  return v.text;
}

Capability claim(Aspect aspect, Enforcement enforcement, Mechanism mechanism,
                 std::optional<Quantity> value, std::string detail, std::optional<LimitRange> range,
                 std::vector<std::string> conditions) {
  Capability c;
  c.aspect = aspect;
  c.enforcement = enforcement;
  c.mechanism = render_mechanism(mechanism);
  if (value) c.value = render_value(*value);
  const bool default_ceiling = std::ranges::find(conditions, kDefaultCeiling) != conditions.end();
  c.detail = (default_ceiling ? "default ceiling (the request set none); " : "") + detail;
  c.range = range;
  c.by = std::move(mechanism);
  c.quantity = std::move(value);
  c.conditions = std::move(conditions);
  return c;
}

Capability no_claim(Aspect aspect, std::string detail, std::optional<LimitRange> range) {
  return claim(aspect, Enforcement::kNone, {}, std::nullopt, std::move(detail), range);
}

Capability output_claim(std::uint64_t cap_bytes) {
  return claim(Aspect::kOutput, Enforcement::kEnforced, {"capture_cap", {}},
               Quantity{Quantity::Unit::kBytes, cap_bytes, ""},
               "output past the cap is read and discarded; the result is marked truncated",
               kOutputRange);
}

std::vector<Enforced> enforced_from(const Capabilities& declaration) {
  std::vector<Enforced> out;
  for (const Capability& c : declaration.aspects) {
    if (c.enforcement == Enforcement::kNone || c.aspect == Aspect::kTimeout ||
        c.aspect == Aspect::kOutput) {
      continue;
    }
    out.push_back({c.aspect, c.mechanism, c.value});
  }
  return out;
}

nlohmann::json claim_data(const Capabilities& declaration) {
  using nlohmann::json;
  json out = json::array();
  for (const Capability& c : declaration.aspects) {
    json mechanism;
    if (!c.by.kind.empty()) {
      json params = json::array();
      for (const auto& [k, v] : c.by.params) params.push_back(json::array({k, v}));
      mechanism = {{"kind", c.by.kind}, {"params", params}};
    } else if (!c.mechanism.empty()) {
      mechanism = {{"words", c.mechanism}};
    }
    json value;
    if (c.quantity) {
      value = {{"unit", unit_name(c.quantity->unit)},
               {"amount", c.quantity->amount},
               {"text", c.quantity->text}};
    } else if (c.value) {
      value = {{"words", *c.value}};
    }
    json range;
    if (c.range) range = {{"min", c.range->min}, {"max", c.range->max}};
    out.push_back({{"aspect", to_string(c.aspect)},
                   {"enforcement", to_string(c.enforcement)},
                   {"mechanism", mechanism},
                   {"value", value},
                   {"conditions", c.conditions},
                   {"range", range}});
  }
  return out;
}

}  // namespace cordon
