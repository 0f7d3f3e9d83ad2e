// The plugins found on this host, each loaded one instantiated and probed: what both
// `cordon run` (to choose) and `cordon backends` (to list) need.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/backend_options.h"
#include "cordon/plugin_registry.h"
#include "cordon/request.h"
#include "frontend/backend_choice.h"

namespace cordon::frontend {

struct CatalogEntry {
  PluginInfo plugin;
  // How lists show it: the plugin's name, or a variant's label, "container (runsc)".
  std::string label;
  std::string variant;  // Probe::variant, or the one it was asked to be; "" for the plain one
  BackendPtr backend;   // null when the plugin failed to load or create() failed
  Probe probe;
  Capabilities capabilities;  // for the limits the catalog was built with
  // Why the backend refused the catalog's BackendOptions (a value it has but cannot
  // honour, e.g. an unknown --runtime); empty when it took them or was not created.
  std::string options_refused;
};

class BackendCatalog {
 public:
  // Discovers plugins on the default search path and probes every loaded one with
  // `limits` (capabilities depend on the limits asked for). With `only` (a backend name,
  // not "auto"), just that backend's plugin is loaded and created when its file is found
  // by name: `cordon run -b NAME` pays for one plugin. Otherwise, and when that file is
  // missing or broken, every plugin is (so errors can list the others). Each backend is
  // created with `options` (--pool-size, --engine, --image, --runtime).
  //
  // With Variants::kList, and no --runtime given, each variant a backend's probe offers
  // (Probe::variants: the container backend under gVisor) is created as an entry of its
  // own, after its plugin's: what the lists (`cordon backends`, `audit --all`, the
  // inspector) show. `only` may be such a label ("container (runsc)"). Without it a
  // catalog probes no variant: `auto` never picks one, and `cordon run` does not pay for it.
  enum class Variants { kSkip, kList };
  explicit BackendCatalog(const Limits& limits = {}, std::string_view only = {},
                          BackendOptions options = {}, Variants variants = Variants::kSkip);
  BackendCatalog(const BackendCatalog&) = delete;
  BackendCatalog& operator=(const BackendCatalog&) = delete;
  ~BackendCatalog();

  [[nodiscard]] const std::vector<std::filesystem::path>& search_path() const {
    return search_path_;
  }
  [[nodiscard]] const std::vector<CatalogEntry>& entries() const { return entries_; }
  [[nodiscard]] const BackendOptions& options() const { return options_; }
  // A usage error (kInvalidArgument) when a backend refused the options asked for: the
  // user named a value that cannot be honoured here, so nothing runs with another one.
  [[nodiscard]] Status options_status() const;
  [[nodiscard]] std::vector<BackendCandidate> candidates() const;
  // The backend of that label, else of that plugin when it made one entry; or null.
  [[nodiscard]] Backend* backend(const std::string& name) const;

 private:
  // Creates, probes and appends the entry of `info` made with `options`.
  void add_entry(const PluginInfo& info, const BackendOptions& options, const Limits& limits,
                 const std::string& variant = {});

  // Declared first so it is destroyed last: the backends' code lives in its plugins.
  PluginRegistry registry_;
  std::vector<std::filesystem::path> search_path_;
  BackendOptions options_;
  std::vector<CatalogEntry> entries_;
};

// `candidates` as a run with a network allow-list sees them: one whose network claim does not
// carry a list (claims.h, carries_allow_list()) is unavailable, with that reason.
[[nodiscard]] std::vector<BackendCandidate> for_allow_list(
    std::vector<BackendCandidate> candidates);

// choose_backend() over `catalog`, built with `wanted` as its `only`: when it holds just
// the named plugin and that one is refused, the refusal is worded from every plugin (it
// names where else the code could run). What `cordon run` and `cordon plan` both choose by.
// Options a backend refused fail the choice first (options_status()). With `allow_list` (the
// run has a network allow-list), a backend that cannot carry one counts as unavailable, with
// that reason: `auto` passes it over, and naming it is refused before anything runs.
[[nodiscard]] Result<BackendChoice> choose_from(const BackendCatalog& catalog, const Limits& limits,
                                                std::string_view wanted, bool allow_unisolated,
                                                bool allow_list = false);

}  // namespace cordon::frontend
