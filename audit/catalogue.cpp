#include "audit/catalogue.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "audit/embedded.h"
#include "cordon/json_number.h"
#include "cordon/sha256.h"

namespace cordon::audit {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<Judge, std::string_view>, 18> kJudges{{
    {Judge::kPrinted, "printed"},
    {Judge::kTcpListener, "tcp_listener"},
    {Judge::kUdpListener, "udp_listener"},
    {Judge::kAbstractUnix, "abstract_unix"},
    {Judge::kPathUnix, "path_unix"},
    {Judge::kCanary, "canary"},
    {Judge::kHostFileCreated, "host_file_created"},
    {Judge::kHostFileIntact, "host_file_intact"},
    {Judge::kTunable, "tunable"},
    {Judge::kCrossRun, "cross_run"},
    {Judge::kCrossSession, "cross_session"},
    {Judge::kSurvivors, "survivors"},
    {Judge::kVictim, "victim"},
    {Judge::kDeadline, "deadline"},
    {Judge::kMemory, "memory"},
    {Judge::kProcessPeak, "process_peak"},
    {Judge::kDisk, "disk"},
    {Judge::kOutput, "output"},
}};

constexpr std::array<std::pair<Control, std::string_view>, 7> kControls{{
    {Control::kSubprocess, "subprocess"},
    {Control::kRequestEnv, "request_env"},
    {Control::kTest, "test"},
    {Control::kLocalTarget, "local_target"},
    {Control::kNone, "none"},
    {Control::kAllowList, "allow_list"},
    {Control::kSameSession, "same_session"},
}};

template <typename E, std::size_t N>
Result<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name,
                 std::string_view what) {
  const auto* it = std::ranges::find(table, name, &std::pair<E, std::string_view>::second);
  if (it == table.end()) {
    return fail(ErrorCode::kInvalidArgument,
                "unknown " + std::string(what) + " '" + std::string(name) + "'");
  }
  return it->first;
}

Result<Aspect> parse_aspect(std::string_view name) {
  const auto* it =
      std::ranges::find_if(kAllAspects, [&](Aspect a) { return to_string(a) == name; });
  if (it == std::end(kAllAspects)) {
    return fail(ErrorCode::kInvalidArgument, "unknown aspect '" + std::string(name) + "'");
  }
  return *it;
}

// Each limit a non-negative integer: get<std::uint64_t>() would wrap -1 to 16 EiB and
// make a float out of range undefined behaviour.
Result<Limits> parse_limits(const json& j) {
  Limits limits;
  if (j.is_null()) return limits;
  if (!j.is_object()) return fail(ErrorCode::kInvalidArgument, "limits: not an object");
  for (const auto& [key, field] : {std::pair{"memory_bytes", &limits.memory_bytes},
                                   std::pair{"max_processes", &limits.max_processes},
                                   std::pair{"scratch_bytes", &limits.scratch_bytes}}) {
    if (!j.contains(key)) continue;
    auto value = json_integer_member<std::uint64_t>(j, key);
    if (!value) return std::unexpected(value.error());
    *field = *value;
  }
  if (j.contains("output_bytes")) {
    auto value = json_integer_member<std::uint64_t>(j, "output_bytes");
    if (!value) return std::unexpected(value.error());
    limits.output_bytes = *value;
  }
  return limits;
}

Result<Attempt> parse_attempt(const json& j, const json& preludes) {
  Attempt a;
  a.id = j.at("id").get<std::string>();
  auto fail_in = [&](const Error& e) {
    return fail(ErrorCode::kInvalidArgument, "attempt " + a.id + ": " + e.message);
  };
  a.threat_class = j.at("class").get<std::string>();
  a.title = j.at("title").get<std::string>();
  const auto aspect = parse_aspect(j.at("aspect").get<std::string>());
  if (!aspect) return fail_in(aspect.error());
  a.aspect = *aspect;
  const auto language = parse_language(j.at("language").get<std::string>());
  if (!language) return fail_in(language.error());
  a.language = *language;
  const auto judge = lookup(kJudges, j.at("judge").get<std::string>(), "judge");
  if (!judge) return fail_in(judge.error());
  a.judge = *judge;
  const auto control = lookup(kControls, j.at("control").get<std::string>(), "control");
  if (!control) return fail_in(control.error());
  a.control = *control;
  a.code = j.at("code").get<std::string>();
  // The prelude named by `key`, if any, put before `code`.
  const auto with_prelude = [&](const char* key, std::string& code) -> Status {
    if (!j.contains(key)) return {};
    const std::string name = j[key].get<std::string>();
    if (!preludes.contains(name)) {
      return fail(ErrorCode::kInvalidArgument, "attempt " + a.id + ": unknown prelude " + name);
    }
    code = preludes[name].get<std::string>() + code;
    return {};
  };
  if (Status s = with_prelude("prelude", a.code); !s) return std::unexpected(s.error());
  a.peer_code = j.value("peer_code", "");
  if (Status s = with_prelude("peer_prelude", a.peer_code); !s) return std::unexpected(s.error());
  if ((a.judge == Judge::kCrossRun || a.judge == Judge::kCrossSession) && a.peer_code.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "attempt " + a.id + ": " + std::string(to_string(a.judge)) + " needs peer_code");
  }
  // The cross-session machinery (its control's wrapper) is python, and only it judges
  // what a same-session control shows.
  if ((a.judge == Judge::kCrossSession) != (a.control == Control::kSameSession) ||
      (a.judge == Judge::kCrossSession && a.language != Language::kPython)) {
    return fail(ErrorCode::kInvalidArgument,
                "attempt " + a.id + ": cross_session goes with a same_session control, in python");
  }
  a.host_acting = j.value("host_acting", false);
  a.require = j.value("require", "");
  const auto timeout = json_integer_member<std::int64_t>(j, "timeout_ms", 5000);
  if (!timeout) return fail_in(timeout.error());
  a.timeout = std::chrono::milliseconds(*timeout);
  const auto limits = parse_limits(j.value("limits", json()));
  if (!limits) return fail_in(limits.error());
  a.limits = *limits;
  for (const auto& [key, into] : {std::pair{"allow_net", &a.allow_net},
                                  std::pair{"control_allow_net", &a.control_allow_net}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_array()) {
      return fail(ErrorCode::kInvalidArgument, "attempt " + a.id + ": " + key + ": not a list");
    }
    *into = j[key].get<std::vector<std::string>>();
  }
  if (a.control == Control::kAllowList && (a.allow_net.empty() || a.control_allow_net.empty())) {
    return fail(ErrorCode::kInvalidArgument,
                "attempt " + a.id + ": control allow_list needs allow_net and control_allow_net");
  }
  return a;
}

}  // namespace

const Attempt* Catalogue::find(std::string_view id) const {
  const auto it = std::ranges::find(attempts, id, &Attempt::id);
  return it == attempts.end() ? nullptr : &*it;
}

Result<Catalogue> parse_catalogue(std::string_view json_text) {
  Catalogue catalogue;
  catalogue.hash = "sha256:" + sha256_hex(json_text);
  try {
    const json j = json::parse(json_text);
    const auto version = json_integer_member<int>(j, "version");
    if (!version) return fail(ErrorCode::kInvalidArgument, "catalogue: " + version.error().message);
    catalogue.version = *version;
    const json preludes = j.value("preludes", json::object());
    for (const json& entry : j.at("attempts")) {
      Result<Attempt> attempt = parse_attempt(entry, preludes);
      if (!attempt) return std::unexpected(attempt.error());
      if (catalogue.find(attempt->id) != nullptr) {
        return fail(ErrorCode::kInvalidArgument, "duplicate attempt id " + attempt->id);
      }
      catalogue.attempts.push_back(std::move(*attempt));
    }
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInvalidArgument, std::string("catalogue: ") + e.what());
  }
  return catalogue;
}

std::string_view builtin_catalogue_text() { return embedded_catalogue_files().front().text; }

Result<Catalogue> builtin_catalogue() { return parse_catalogue(builtin_catalogue_text()); }

std::string_view to_string(Judge judge) {
  const auto* it = std::ranges::find(kJudges, judge, &std::pair<Judge, std::string_view>::first);
  return it == kJudges.end() ? "unknown" : it->second;
}

std::string_view to_string(Control control) {
  const auto* it =
      std::ranges::find(kControls, control, &std::pair<Control, std::string_view>::first);
  return it == kControls.end() ? "unknown" : it->second;
}

}  // namespace cordon::audit
