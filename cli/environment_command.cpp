#include "environment_command.h"

#include <cstdio>
#include <filesystem>

#include "audit/interpreters.h"
#include "cli_error.h"
#include "cordon/text.h"
#include "frontend/backend_catalog.h"

namespace cordon::cli {
namespace {

using environment::Environment;
using environment::Store;
using nlohmann::json;

// The interpreters of a tree as a sandbox on it answers their version probes: through the
// most isolating backend that can show an environment (never the host: subprocess refuses).
Result<std::vector<environment::Versioned>> measure_in(const std::string& root) {
  BackendOptions options;
  options.system_root = root;
  const frontend::BackendCatalog catalog({}, {}, options);
  Result<frontend::BackendChoice> choice =
      frontend::choose_from(catalog, {}, frontend::kAutoBackend, /*allow_unisolated=*/false);
  if (!choice) return std::unexpected(choice.error());
  Backend* backend = catalog.backend(choice->name);
  if (backend == nullptr) return fail(ErrorCode::kInternal, "backend vanished: " + choice->name);
  (void)backend->prepare();
  std::vector<environment::Versioned> out;
  for (const audit::InterpreterVersion& v : audit::measure_interpreters(*backend)) {
    out.push_back({std::string(to_string(v.language)), v.version});
  }
  return out;
}

// "six 1.16.0, PyYAML 6.0" (with versions), "Python 3.11.2, dash" (the versions alone).
std::string names(const std::vector<environment::Versioned>& items, bool versions) {
  std::vector<std::string> words;
  words.reserve(items.size());
  for (const auto& v : items) words.push_back(versions ? v.name + " " + v.version : v.version);
  return words.empty() ? "none" : join(words);
}

void print_environment(const Environment& e) {
  std::printf("%s\n  digest: %s\n  source: %s (added %s)\n  interpreters: %s\n", e.name.c_str(),
              e.digest.c_str(), e.source.c_str(), e.added_at.c_str(),
              names(e.inventory.interpreters, false).c_str());
  std::printf("  python packages: %s\n", names(e.inventory.python_packages, true).c_str());
  std::printf("  tools: %s\n",
              e.inventory.tools.empty() ? "none" : join(e.inventory.tools).c_str());
}

json environment_json(const Environment& e) {
  return {{"name", e.name},          {"digest", e.digest.empty() ? json(nullptr) : json(e.digest)},
          {"root", e.root.string()}, {"source", e.source},
          {"added_at", e.added_at},  {"inventory", environment::to_json(e.inventory)}};
}

}  // namespace

int environment_command(const EnvironmentOptions& options) {
  auto dir = Store::default_dir();
  if (!dir) return report_failure(dir.error().describe(), options.json);
  Store store(*dir);
  switch (options.action) {
    case EnvironmentOptions::Action::kAdd: {
      std::fprintf(stderr, "cordon: hashing and copying %s into %s ...\n", options.source.c_str(),
                   dir->c_str());
      // A directory is copied as it is; anything else names an image podman holds.
      std::error_code ec;
      auto added = std::filesystem::is_directory(options.source, ec)
                       ? store.add(options.name, options.source, &measure_in)
                       : store.add_image(options.name, options.source, &measure_in);
      if (!added) return report_failure(added.error().describe(), false);
      print_environment(*added);
      return 0;
    }
    case EnvironmentOptions::Action::kRemove: {
      if (Status s = store.remove(options.name); !s) {
        return report_failure(s.error().describe(), false);
      }
      std::printf("removed %s\n", options.name.c_str());
      return 0;
    }
    case EnvironmentOptions::Action::kList:
      break;
  }
  auto listed = store.list();
  if (!listed) return report_failure(listed.error().describe(), options.json);
  // The default first: an environment like the others, measured now rather than pinned.
  Environment host{.name = environment::kHostName,
                   .digest = "",
                   .root = "/",
                   .source = "the host's /usr (/usr/local hidden); not pinned",
                   .added_at = "",
                   .inventory = environment::inventory_for(environment::Selection{
                       .name = environment::kHostName, .digest = "", .root = ""})};
  if (options.json) {
    json out = json::array({environment_json(host)});
    for (const Environment& e : *listed) out.push_back(environment_json(e));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("host (default)\n  %s\n", host.source.c_str());
  std::printf("  python packages: %s\n", names(host.inventory.python_packages, true).c_str());
  for (const Environment& e : *listed) print_environment(e);
  return 0;
}

Result<environment::Selection> apply_environment(const EnvironmentFlags& flags,
                                                 BackendOptions& options) {
  // Engine mode runs the engine's image: what the host's /usr holds says nothing about it.
  if (!flags.name && !flags.rootfs && (options.engine || options.image)) {
    return environment::Selection{
        .name = "", .digest = "", .root = "", .inventory = std::nullopt, .engine_image = true};
  }
  auto selection = environment::select(flags.name, flags.rootfs);
  if (!selection) {
    return fail(selection.error().code,
                (flags.rootfs ? "--rootfs: " : "--environment: ") + selection.error().describe());
  }
  environment::show_in(*selection, options);
  return selection;
}

std::optional<EnvironmentRef> environment_ref(const environment::Selection& selection) {
  if (selection.engine_image) return std::nullopt;
  return EnvironmentRef{.name = selection.name, .digest = selection.digest};
}

Backend* control_backend(const frontend::BackendCatalog& catalog,
                         const environment::Selection& selection,
                         std::unique_ptr<frontend::BackendCatalog>& own) {
  if (selection.is_host()) return catalog.backend("subprocess");
  own = std::make_unique<frontend::BackendCatalog>(Limits{}, "subprocess", BackendOptions{});
  return own->backend("subprocess");
}

}  // namespace cordon::cli
