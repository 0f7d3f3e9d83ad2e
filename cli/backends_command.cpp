#include "backends_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "backend_catalog.h"
#include "cordon/limit_check.h"
#include "cordon/result_json.h"

namespace cordon::cli {
namespace {

nlohmann::json entry_json(const CatalogEntry& entry) {
  nlohmann::json out = {
      {"name", entry.plugin.name},
      {"version", entry.plugin.version},
      {"path", entry.plugin.path.string()},
      {"loaded", entry.plugin.loaded},
      {"load_error",
       entry.plugin.loaded ? nlohmann::json(nullptr) : nlohmann::json(entry.plugin.error)},
      {"available", entry.backend != nullptr && entry.probe.available},
      {"reason", entry.probe.reason},
  };
  if (entry.backend != nullptr) {
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
    std::printf("%s %s: %s%s%s\n  %s\n", entry.plugin.name.c_str(),
                entry.plugin.version.empty() ? "(unknown version)" : entry.plugin.version.c_str(),
                available ? "available" : "not available", entry.probe.reason.empty() ? "" : " — ",
                entry.probe.reason.c_str(), entry.plugin.path.c_str());
    if (entry.backend == nullptr) continue;
    std::printf("  isolation: %d of %zu aspects enforced%s\n", entry.capabilities.isolation_score(),
                std::size(kIsolationAspects),
                entry.capabilities.isolates() ? "" : " (does not isolate)");
    for (const Capability& capability : entry.capabilities.aspects) print_capability(capability);
  }
  const nlohmann::json choice = auto_json(catalog);
  std::printf("\n%s\n",
              choice["choice"].is_null()
                  ? ("auto chooses nothing: " + choice["reason"].get<std::string>()).c_str()
                  : choice["reason"].get<std::string>().c_str());
}

}  // namespace

int backends_command(const BackendsOptions& options) {
  const BackendCatalog catalog;
  if (options.json) {
    print_json(catalog);
  } else {
    print_text(catalog);
  }
  return 0;
}

}  // namespace cordon::cli
