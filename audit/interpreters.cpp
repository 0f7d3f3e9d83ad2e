#include "audit/interpreters.h"

#include <chrono>

#include "cordon/cancel.h"
#include "cordon/interpreter.h"

namespace cordon::audit {
namespace {

// The probe's one line, or "" when it is not a short line of printable ASCII.
std::string usable_line(std::string out) {
  if (!out.empty() && out.back() == '\n') out.pop_back();
  if (out.empty() || out.size() > 100) return {};
  for (const char c : out) {
    if (c < ' ' || c > '~') return {};
  }
  return out;
}

}  // namespace

std::vector<InterpreterVersion> measure_interpreters(Backend& backend) {
  std::vector<InterpreterVersion> out;
  // Each language's probe (the interpreter table's) prints one line naming it.
  for (const InterpreterSpec& probe : kInterpreters) {
    RunRequest request;
    request.language = probe.language;
    request.code = std::string(probe.version_probe);
    request.timeout = std::chrono::seconds(10);
    const RunResult result = backend.run(request, CancelToken{}, nullptr);
    if (!result.ok()) continue;
    if (std::string line = usable_line(result.stdout_data); !line.empty()) {
      out.push_back({probe.language, std::move(line)});
    }
  }
  return out;
}

nlohmann::json to_json(const std::vector<InterpreterVersion>& interpreters) {
  nlohmann::json out = nlohmann::json::array();
  for (const InterpreterVersion& i : interpreters) {
    out.push_back({{"language", to_string(i.language)}, {"version", i.version}});
  }
  return out;
}

std::vector<InterpreterVersion> interpreters_from_json(const nlohmann::json& j) {
  std::vector<InterpreterVersion> out;
  if (!j.is_array()) return out;
  for (const nlohmann::json& entry : j) {
    // json::value() throws when the member has another type: read only strings, so a
    // stray number skips its entry instead of failing the whole report.
    if (!entry.is_object()) continue;
    const auto language_field = entry.find("language");
    const auto version_field = entry.find("version");
    if (language_field == entry.end() || !language_field->is_string() ||
        version_field == entry.end() || !version_field->is_string()) {
      continue;
    }
    const Result<Language> language = parse_language(language_field->get<std::string>());
    const std::string version = version_field->get<std::string>();
    if (language && !version.empty()) out.push_back({*language, version});
  }
  return out;
}

}  // namespace cordon::audit
