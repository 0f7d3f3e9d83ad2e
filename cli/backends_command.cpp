#include "backends_command.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/limit_check.h"
#include "cordon/proc/cgroup_layout.h"
#include "cordon/result_json.h"
#include "cordon/text.h"
#include "frontend/backend_catalog.h"
#include "frontend/prompt_render.h"
#include "frontend_names.h"

namespace cordon::cli {
namespace {

nlohmann::json entry_json(const CatalogEntry& entry) {
  nlohmann::json out = {
      {"name", entry.label},
      {"plugin", entry.plugin.name},
      {"variant", entry.variant},
      {"version", entry.plugin.version},
      {"path", entry.plugin.path.string()},
      {"loaded", entry.plugin.loaded},
      {"load_error",
       entry.plugin.loaded ? nlohmann::json(nullptr) : nlohmann::json(entry.plugin.error)},
      {"available", entry.backend != nullptr && entry.probe.available},
      {"reason", entry.probe.reason},
  };
  if (entry.backend != nullptr) {
    out["languages"] = nlohmann::json::array();
    if (entry.probe.available) {
      for (const Language l : frontend::available_languages(*entry.backend)) {
        out["languages"].push_back(to_string(l));
      }
    }
    out["isolates"] = entry.capabilities.isolates();
    out["isolation_score"] = entry.capabilities.isolation_score();
    out["capabilities"] = to_json(entry.capabilities);
  }
  return out;
}

// What `--backend auto` would choose here, and why (or why nothing).
nlohmann::json auto_json(const BackendCatalog& catalog) {
  const Result<BackendChoice> choice =
      choose_backend(catalog.candidates(), kAutoBackend, /*allow_unisolated=*/false);
  if (!choice) return {{"choice", nullptr}, {"reason", choice.error().message}};
  return {{"choice", choice->name}, {"reason", choice->reason}};
}

void print_json(const BackendCatalog& catalog) {
  nlohmann::json plugins = nlohmann::json::array();
  for (const CatalogEntry& entry : catalog.entries()) plugins.push_back(entry_json(entry));
  nlohmann::json search_path = nlohmann::json::array();
  for (const auto& dir : catalog.search_path()) search_path.push_back(dir.string());
  const nlohmann::json out = {
      {"search_path", search_path}, {"plugins", plugins}, {"auto", auto_json(catalog)}};
  std::printf("%s\n", out.dump(/*indent=*/2, /*indent_char=*/' ', /*ensure_ascii=*/false,
                               nlohmann::json::error_handler_t::replace)
                          .c_str());
}

void print_capability(const Capability& capability) {
  std::string line = "    " + std::string(to_string(capability.aspect));
  line.resize(20, ' ');
  std::string level(to_string(capability.enforcement));
  level.resize(10, ' ');
  line += level;
  if (!capability.mechanism.empty()) line += capability.mechanism;
  if (capability.value) line += " (" + *capability.value + ")";
  if (!capability.detail.empty()) line += " — " + capability.detail;
  // What a request may ask for this limit; anything else is refused before a run starts.
  if (capability.range)
    line += " [accepts " + format_range(capability.aspect, *capability.range) + "]";
  std::printf("%s\n", line.c_str());
}

void print_text(const BackendCatalog& catalog) {
  if (catalog.entries().empty()) {
    std::printf("no backend plugins found; searched:\n");
    for (const auto& dir : catalog.search_path()) std::printf("  %s\n", dir.c_str());
    return;
  }
  for (const CatalogEntry& entry : catalog.entries()) {
    const bool available = entry.backend != nullptr && entry.probe.available;
    std::printf("%s %s: %s%s%s\n  %s\n", entry.label.c_str(),
                entry.plugin.version.empty() ? "(unknown version)" : entry.plugin.version.c_str(),
                available ? "available" : "not available", entry.probe.reason.empty() ? "" : " — ",
                entry.probe.reason.c_str(), entry.plugin.path.c_str());
    if (entry.backend == nullptr) continue;
    std::printf("  isolation: %d of %zu aspects enforced%s\n", entry.capabilities.isolation_score(),
                std::size(kIsolationAspects),
                entry.capabilities.isolates() ? "" : " (does not isolate)");
    if (available) {
      std::vector<std::string> names;
      for (const Language l : frontend::available_languages(*entry.backend)) {
        names.emplace_back(to_string(l));
      }
      std::printf("  languages: %s\n", names.empty() ? "none found" : join(names).c_str());
    }
    for (const Capability& capability : entry.capabilities.aspects) print_capability(capability);
  }
  const nlohmann::json choice = auto_json(catalog);
  std::printf("\n%s\n",
              choice["choice"].is_null()
                  ? ("auto chooses nothing: " + choice["reason"].get<std::string>()).c_str()
                  : choice["reason"].get<std::string>().c_str());
}

// A table cell: the pipe would end the cell, a newline the row.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c == '\n' ? ' ' : c;
    }
  }
  return out;
}

// What the declarations below depend on: the cgroup layout and whether cordon is root.
std::string host_line() {
  std::string layout = "no cgroup";
  if (auto h = proc::discover_cgroup_hierarchies("/")) {
    bool v1 = false;
    bool v2 = false;
    for (const auto& hierarchy : *h) (hierarchy.v2 ? v2 : v1) = true;
    layout = v1 && v2 ? "cgroup v1 + v2 (hybrid)" : v2 ? "cgroup v2" : v1 ? "cgroup v1" : layout;
  }
  return "host: " + layout + ", " + (::geteuid() == 0 ? "root" : "unprivileged");
}

// The default limits' declaration of each available backend, rendered from its data
// (claims.h): the words `mechanism` and `value` of each aspect and its conditions; the
// prose (`detail`) stays in the hand-written tables around it.
void print_markdown(const BackendCatalog& catalog) {
  std::printf("%s\n", host_line().c_str());
  for (const CatalogEntry& entry : catalog.entries()) {
    if (entry.backend == nullptr || !entry.probe.available) continue;
    std::printf(
        "\n`%s`:\n\n| aspect | enforced | mechanism | value | conditions |\n"
        "|---|---|---|---|---|\n",
        entry.label.c_str());
    for (const Capability& c : entry.capabilities.aspects) {
      std::string conditions;
      for (const std::string& condition : c.conditions) {
        conditions += (conditions.empty() ? "" : ", ") + condition;
      }
      std::printf("| %s | %s | %s | %s | %s |\n", std::string(to_string(c.aspect)).c_str(),
                  std::string(to_string(c.enforcement)).c_str(), cell(c.mechanism).c_str(),
                  cell(c.value.value_or("")).c_str(), cell(conditions).c_str());
    }
  }
}

}  // namespace

int backends_command(const BackendsOptions& options) {
  const BackendCatalog catalog({}, {}, options.backend_options, BackendCatalog::Variants::kList);
  if (options.json) {
    print_json(catalog);
  } else if (options.markdown) {
    print_markdown(catalog);
  } else {
    print_text(catalog);
  }
  return 0;
}

}  // namespace cordon::cli
