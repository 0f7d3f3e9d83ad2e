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
           (hash.empty() ? "" : " " + hash) +
           (param(m, "applied_by") == "gvisor" ? " (applied by gVisor's kernel)" : "");
  }
  if (k == "user_space_kernel") {
    return param(m, "kernel") + " user-space kernel (platform " + param(m, "platform") + ")";
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
  c.detail =
      default_ceiling ? "default ceiling (the request set none); " + detail : std::move(detail);
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

std::vector<std::string> ceiling_conditions(bool requested) {
  if (requested) return {};
  return {std::string(kDefaultCeiling)};
}

Capability network_namespace_claim(bool on, std::string detail, bool egress_proxy) {
  if (!on) {
    return no_claim(Aspect::kNetwork,
                    "network namespace switched off: the host's network is reachable");
  }
  Mechanism by{"namespace", {{"type", "network"}, {"interfaces", "lo"}}};
  if (egress_proxy) {
    by.params.emplace_back("egress", "proxy");
    detail += "; with --allow-net, egress only through cordon's proxy to the hosts listed";
  }
  return claim(Aspect::kNetwork, Enforcement::kEnforced, std::move(by), std::nullopt,
               std::move(detail));
}

bool carries_allow_list(const Capability& network) {
  return network.aspect == Aspect::kNetwork && network.enforcement == Enforcement::kEnforced &&
         network.by.kind == "namespace" && param(network.by, "egress") == "proxy";
}

bool carries_allow_list(const Capabilities& declaration) {
  const Capability* network = declaration.find(Aspect::kNetwork);
  return network != nullptr && carries_allow_list(*network);
}

Capability seccomp_claim(bool on, std::string_view name, int version, std::string_view hash,
                         std::string detail) {
  if (!on) return no_claim(Aspect::kSyscallFilter, "seccomp switched off");
  Mechanism seccomp{"seccomp", {}};
  if (!name.empty()) {  // empty: the policy could not be built here (the backend refuses)
    seccomp.params = {{"policy", std::string(name)},
                      {"version", std::to_string(version)},
                      {"hash", std::string(hash)}};
  }
  return claim(Aspect::kSyscallFilter, Enforcement::kEnforced, std::move(seccomp), std::nullopt,
               std::move(detail));
}

Capability scratch_claim(std::uint64_t bytes, std::string_view more) {
  return claim(Aspect::kDisk, Enforcement::kEnforced, {"tmpfs", {}},
               Quantity{Quantity::Unit::kBytes, bytes, ""},
               "the only writable places are the /tmp tmpfs and a 16 MiB /dev/shm; writes past "
               "them fail with ENOSPC" +
                   std::string(more),
               kScratchRange);
}

Capability rlimit_cpu_claim(std::chrono::milliseconds cpu_time, std::string_view whole) {
  const auto secs = std::max<std::uint64_t>((cpu_time.count() + 999) / 1000, 1);
  return claim(Aspect::kCpu, Enforcement::kPartial,
               {"rlimit", {{"resource", "RLIMIT_CPU"}, {"per", "process"}}},
               Quantity{Quantity::Unit::kMilliseconds, secs * 1000, ""},
               "CPU time per process, not the whole " + std::string(whole) + "'s",
               rlimit_cpu_range());
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

nlohmann::json claim_json(const Capability& c) {
  using nlohmann::json;
  json mechanism;
  if (!c.by.kind.empty()) {
    json params = json::array();
    for (const auto& [k, v] : c.by.params) params.push_back(json::array({k, v}));
    mechanism = {{"kind", c.by.kind}, {"params", params}};
  }
  json value;
  if (c.quantity) {
    value = {{"unit", unit_name(c.quantity->unit)},
             {"amount", c.quantity->amount},
             {"text", c.quantity->text}};
  }
  return {{"mechanism", mechanism}, {"value", value}, {"conditions", c.conditions}};
}

Status read_claim_json(const nlohmann::json& in, Capability& c) {
  const auto bad = [](std::string_view what, const nlohmann::json& v) {
    return fail(ErrorCode::kInvalidArgument,
                "claim '" + std::string(what) + "' has an unexpected value: " + v.dump());
  };
  if (!in.is_object()) return bad("claim", in);
  if (const auto m = in.find("mechanism"); m != in.end() && !m->is_null()) {
    const auto kind = m->find("kind");
    const auto params = m->find("params");
    if (!m->is_object() || kind == m->end() || !kind->is_string() || params == m->end() ||
        !params->is_array()) {
      return bad("mechanism", *m);
    }
    Mechanism by{kind->get<std::string>(), {}};
    for (const auto& p : *params) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) {
        return bad("mechanism", *m);
      }
      by.params.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
    c.by = std::move(by);
  }
  if (const auto v = in.find("value"); v != in.end() && !v->is_null()) {
    const auto unit = v->is_object() ? v->find("unit") : v->end();
    const auto amount = v->is_object() ? v->find("amount") : v->end();
    const auto text = v->is_object() ? v->find("text") : v->end();
    if (!v->is_object() || unit == v->end() || !unit->is_string() || amount == v->end() ||
        !amount->is_number_unsigned() || text == v->end() || !text->is_string()) {
      return bad("value", *v);
    }
    Quantity q;
    bool known = false;
    for (const auto u :
         {Quantity::Unit::kBytes, Quantity::Unit::kCount, Quantity::Unit::kMilliseconds,
          Quantity::Unit::kCpus, Quantity::Unit::kText}) {
      if (unit_name(u) == unit->get<std::string>()) {
        q.unit = u;
        known = true;
      }
    }
    if (!known) return bad("value", *v);
    q.amount = amount->get<std::uint64_t>();
    q.text = text->get<std::string>();
    c.quantity = std::move(q);
  }
  if (const auto conds = in.find("conditions"); conds != in.end() && !conds->is_null()) {
    if (!conds->is_array()) return bad("conditions", *conds);
    std::vector<std::string> out;
    for (const auto& cond : *conds) {
      if (!cond.is_string()) return bad("conditions", *conds);
      out.push_back(cond.get<std::string>());
    }
    c.conditions = std::move(out);
  }
  return {};
}

nlohmann::json claim_data(const Capabilities& declaration) {
  using nlohmann::json;
  json out = json::array();
  for (const Capability& c : declaration.aspects) {
    json data = claim_json(c);
    // An entry made from words only contributes its words.
    if (c.by.kind.empty() && !c.mechanism.empty()) data["mechanism"] = {{"words", c.mechanism}};
    if (!c.quantity && c.value) data["value"] = {{"words", *c.value}};
    json range;
    if (c.range) range = {{"min", c.range->min}, {"max", c.range->max}};
    out.push_back({{"aspect", to_string(c.aspect)},
                   {"enforcement", to_string(c.enforcement)},
                   {"mechanism", data["mechanism"]},
                   {"value", data["value"]},
                   {"conditions", data["conditions"]},
                   {"range", range}});
  }
  return out;
}

}  // namespace cordon
