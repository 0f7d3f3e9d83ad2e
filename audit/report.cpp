#include "audit/report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <set>

#include "cordon/claims.h"
#include "cordon/interpreter.h"
#include "cordon/json_number.h"
#include "cordon/net/net_policy.h"
#include "cordon/result_json.h"
#include "cordon/sha256.h"
#include "cordon/text.h"

namespace cordon::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

Result<Aspect> aspect_named(const std::string& name) {
  for (const Aspect a : kAllAspects) {
    if (to_string(a) == name) return a;
  }
  return fail(ErrorCode::kInvalidArgument, "unknown aspect " + name);
}

Result<Enforcement> enforcement_named(const std::string& name) {
  for (const Enforcement e : {Enforcement::kNone, Enforcement::kPartial, Enforcement::kEnforced}) {
    if (to_string(e) == name) return e;
  }
  return fail(ErrorCode::kInvalidArgument, "unknown enforcement " + name);
}

}  // namespace

const AttemptVerdict* AuditReport::find(std::string_view id) const {
  const auto it = std::ranges::find(verdicts, id, &AttemptVerdict::id);
  return it == verdicts.end() ? nullptr : &*it;
}

std::string host_fingerprint() {
  utsname u{};
  ::uname(&u);
  std::string id = read_first_line("/etc/machine-id");
  if (id.empty()) id = u.nodename;
  std::string text = std::string(u.sysname) + "\n" + u.release + "\n" + u.version + "\n" +
                     u.machine + "\n" + id + "\neuid " + std::to_string(::geteuid()) + "\n";
  text += std::string("cgroup2 ") +
          (fs::exists("/sys/fs/cgroup/cgroup.controllers") ? "unified" : "v1/hybrid") + "\n";
  for (const char* sysctl :
       {"/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_bpf_disabled", "/proc/sys/kernel/perf_event_paranoid",
        "/proc/sys/vm/unprivileged_userfaultfd", "/proc/sys/kernel/io_uring_disabled",
        "/proc/sys/kernel/yama/ptrace_scope", "/proc/sys/kernel/dmesg_restrict"}) {
    text += std::string(sysctl) + "=" + read_first_line(sysctl) + "\n";
  }
  return "sha256:" + sha256_hex(text);
}

std::string host_summary() {
  utsname u{};
  ::uname(&u);
  return std::string(u.sysname) + " " + u.release + " " + u.machine + ", euid " +
         std::to_string(::geteuid());
}

std::string network_binding(const NetworkAccess& network) {
  if (!network.any()) return "";
  const auto canonical = [](std::vector<std::string> entries) {
    std::ranges::sort(entries);
    entries.erase(std::ranges::unique(entries).begin(), entries.end());
    return entries;
  };
  // Each entry as the policy reads it (lower case, no trailing dot, CIDRs masked); a list
  // it refuses is bound as written, lower-cased (no run takes it anyway).
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  if (auto policy = net::NetPolicy::make(network.allow, network.deny)) {
    allow = policy->allow_entries();
    deny = policy->deny_entries();
  } else {
    for (const std::string& e : network.allow) allow.push_back(ascii_lower(e));
    for (const std::string& e : network.deny) deny.push_back(ascii_lower(e));
  }
  json out{{"allow", canonical(std::move(allow))}, {"deny", canonical(std::move(deny))}};
  out["max_bytes"] = network.max_bytes ? json(*network.max_bytes) : json(nullptr);
  out["max_connections"] = network.max_connections ? json(*network.max_connections) : json(nullptr);
  return out.dump();
}

std::string policy_hash(const Backend& backend, const Catalogue& catalogue,
                        std::string_view network) {
  // The claims as data (claims.h), never their words: a reworded sentence keeps every
  // stored report; a changed mechanism, value, condition or range retires them.
  std::string text = claim_data(backend.capabilities(Limits{})).dump();
  std::set<std::string> seen;
  for (const Attempt& a : catalogue.attempts) {
    const std::string claims = claim_data(backend.capabilities(a.limits)).dump();
    if (seen.insert(claims).second) text += "\n" + claims;
  }
  if (!network.empty()) text += "\nnetwork " + std::string(network);
  // A complete report holds the interpreters measured for the languages of the table it was
  // made with: a language added to the table needs a new measurement (and its own attempts
  // through the backend), so the table's names are bound too.
  text += "\nlanguages";
  for (const InterpreterSpec& spec : kInterpreters) text += " " + std::string(spec.name);
  return "sha256:" + sha256_hex(text);
}

ReportBinding binding_for(const Backend& backend, const Catalogue& catalogue,
                          const NetworkAccess& network) {
  std::string list = network_binding(network);
  return ReportBinding{.host_fingerprint = host_fingerprint(),
                       .backend_name = backend_label(backend.name(), backend.variant()),
                       .backend_version = std::string(backend.version()),
                       .policy_hash = policy_hash(backend, catalogue, list),
                       .catalogue_hash = catalogue.hash,
                       .network = std::move(list)};
}

AuditReport start_report(Backend& backend, const Catalogue& catalogue, bool complete,
                         const NetworkAccess& network) {
  AuditReport report{.binding = binding_for(backend, catalogue, network),
                     .host_summary = host_summary(),
                     .created_at = utc_now(),
                     .complete = complete,
                     .verdicts = {}};
  if (complete) report.interpreters = measure_interpreters(backend);
  return report;
}

json to_json(const AttemptVerdict& v) {
  return json{{"id", v.id},
              {"class", v.threat_class},
              {"aspect", to_string(v.aspect)},
              {"claimed", to_string(v.claimed)},
              {"status", to_string(v.status)},
              {"evidence", v.evidence},
              {"control", v.control},
              {"duration_ms", v.duration_ms}};
}

json to_json(const AuditReport& r) {
  json verdicts = json::array();
  for (const AttemptVerdict& v : r.verdicts) verdicts.push_back(to_json(v));
  int escaped_claims = 0;
  for (const AttemptVerdict& v : r.verdicts) escaped_claims += v.contradicts_claim() ? 1 : 0;
  return json{
      {"schema", kReportSchemaVersion},
      {"backend", {{"name", r.binding.backend_name}, {"version", r.binding.backend_version}}},
      {"host_fingerprint", r.binding.host_fingerprint},
      {"host", r.host_summary},
      {"policy_hash", r.binding.policy_hash},
      {"catalogue_hash", r.binding.catalogue_hash},
      {"network", r.binding.network.empty() ? json(nullptr) : json::parse(r.binding.network)},
      {"created_at", r.created_at},
      {"complete", r.complete},
      {"escaped_claims", escaped_claims},
      {"exit_status", audit_exit_status(r.verdicts)},
      {"interpreters", to_json(r.interpreters)},
      {"attempts", verdicts}};
}

Result<AuditReport> report_from_json(const json& j) {
  try {
    if (json_integer_member<int>(j, "schema").value_or(0) != kReportSchemaVersion) {
      return fail(ErrorCode::kInvalidArgument, "report schema differs");
    }
    AuditReport r;
    r.binding.backend_name = j.at("backend").at("name").get<std::string>();
    r.binding.backend_version = j.at("backend").at("version").get<std::string>();
    r.binding.host_fingerprint = j.at("host_fingerprint").get<std::string>();
    r.binding.policy_hash = j.at("policy_hash").get<std::string>();
    r.binding.catalogue_hash = j.at("catalogue_hash").get<std::string>();
    // Written by network_binding(); absent or null in a report made without a list.
    if (const auto it = j.find("network"); it != j.end() && !it->is_null()) {
      r.binding.network = it->dump();
    }
    r.host_summary = j.value("host", "");
    r.created_at = j.value("created_at", "");
    r.complete = j.value("complete", false);
    r.interpreters = interpreters_from_json(j.value("interpreters", json::array()));
    for (const json& a : j.at("attempts")) {
      AttemptVerdict v;
      v.id = a.at("id").get<std::string>();
      v.threat_class = a.at("class").get<std::string>();
      const auto aspect = aspect_named(a.at("aspect").get<std::string>());
      const auto claimed = enforcement_named(a.at("claimed").get<std::string>());
      const auto status = parse_status(a.at("status").get<std::string>());
      if (!aspect || !claimed || !status) {
        return fail(ErrorCode::kInvalidArgument, "report: bad attempt " + v.id);
      }
      v.aspect = *aspect;
      v.claimed = *claimed;
      v.status = *status;
      v.evidence = a.value("evidence", "");
      v.control = a.value("control", "");
      const auto duration = json_integer_member<std::int64_t>(a, "duration_ms", 0);
      if (!duration)
        return fail(ErrorCode::kInvalidArgument, "report: " + duration.error().message);
      v.duration_ms = *duration;
      r.verdicts.push_back(std::move(v));
    }
    return r;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInvalidArgument, std::string("report: ") + e.what());
  }
}

int audit_exit_status(const std::vector<AttemptVerdict>& verdicts) {
  if (std::ranges::any_of(verdicts, &AttemptVerdict::contradicts_claim)) return 1;
  const bool unjudged = std::ranges::any_of(verdicts, [](const AttemptVerdict& v) {
    return v.claimed != Enforcement::kNone && v.status == AttemptStatus::kError;
  });
  return unjudged ? 2 : 0;
}

std::string sessions_unbacked(const AuditReport& report) {
  bool any = false;
  for (const AttemptVerdict& v : report.verdicts) {
    if (v.threat_class != kSessionClass) continue;
    any = true;
    if (v.status != AttemptStatus::kBlocked) {
      return "audit attempt " + v.id + " is " + std::string(to_string(v.status)) + " (" +
             v.evidence + ")";
    }
  }
  return any ? "" : "the audit report holds no cross-session attempt";
}

fs::path report_dir() {
  if (const std::string dir = env_or_empty("CORDON_AUDIT_DIR"); !dir.empty()) return dir;
  if (const std::string state = env_or_empty("XDG_STATE_HOME"); !state.empty()) {
    return fs::path(state) / "cordon" / "audit";
  }
  const std::string home = env_or_empty("HOME");
  return fs::path(home.empty() ? "/tmp" : home) / ".local" / "state" / "cordon" / "audit";
}

fs::path report_path(const ReportBinding& b) {
  // One file per binding: the name carries a digest of all of it.
  const std::string key = sha256_hex(
      b.host_fingerprint + "\n" + b.backend_name + "\n" + b.backend_version + "\n" + b.policy_hash +
      "\n" + b.catalogue_hash + (b.network.empty() ? "" : "\n" + b.network));
  // "container (runsc)" names its file container-runsc-….json.
  std::string stem;
  for (const char c : b.backend_name) {
    if (c == ' ' || c == '(' || c == ')') {
      if (!stem.empty() && stem.back() != '-') stem += '-';
    } else {
      stem += c == '/' ? '_' : c;
    }
  }
  if (!stem.empty() && stem.back() == '-') stem.pop_back();
  return report_dir() / (stem + "-" + key.substr(0, 16) + ".json");
}

Status store_report(const AuditReport& report) {
  const fs::path path = report_path(report.binding);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail_errno("cannot create " + path.parent_path().string(), ec.value());
  // Written aside and renamed: a reader never sees half a report. Whatever fails, the
  // partial file goes (a full or read-only disk must not collect them), and the message
  // says why (errno), not only where.
  const fs::path tmp = path.string() + ".tmp";
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::trunc);
    if (out) out << to_json(report).dump(2) << "\n";
    if (out) out.close();
    if (!out) {
      const int err = errno != 0 ? errno : EIO;
      fs::remove(tmp, ec);
      return fail_errno("cannot write " + tmp.string(), err);
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const int err = ec.value();
    fs::remove(tmp, ec);
    return fail_errno("cannot rename to " + path.string(), err);
  }
  return {};
}

std::optional<AuditReport> load_report(const ReportBinding& binding) {
  std::ifstream in(report_path(binding));
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  Result<AuditReport> r = report_from_json(j);
  if (!r || !(r->binding == binding) || !r->complete) return std::nullopt;
  return std::move(*r);
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace cordon::audit
