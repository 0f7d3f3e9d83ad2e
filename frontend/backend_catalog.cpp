#include "frontend/backend_catalog.h"

#include <algorithm>
#include <utility>

#include "cordon/claims.h"

namespace cordon::frontend {

BackendCatalog::BackendCatalog(const Limits& limits, std::string_view only, BackendOptions options,
                               Variants variants)
    : search_path_(PluginRegistry::default_search_path()), options_(std::move(options)) {
  // "container (runsc)": its plugin's file is found by the name before the label.
  if (const std::size_t paren = only.find(" ("); paren != std::string_view::npos) {
    only = only.substr(0, paren);
    variants = Variants::kList;
  }
  if (only.empty() || only == kAutoBackend) {
    registry_.discover(search_path_);
  } else {
    registry_.discover_named(search_path_, only);
  }
  for (const PluginInfo& info : registry_.plugins()) {
    add_entry(info, options_, limits);
    // A variant is another configuration of the same backend: only when the user chose no
    // runtime (with one, the entry above already is what was asked for).
    const std::vector<BackendVariant> offered = entries_.back().probe.variants;
    if (variants != Variants::kList || options_.runtime || entries_.back().backend == nullptr) {
      continue;
    }
    for (const BackendVariant& variant : offered) {
      BackendOptions with = options_;
      with.runtime = variant.runtime;
      add_entry(info, with, limits, variant.label);
    }
  }
}

void BackendCatalog::add_entry(const PluginInfo& info, const BackendOptions& options,
                               const Limits& limits, const std::string& variant) {
  // Named by the variant asked for even when it could not be created (the reason says why).
  CatalogEntry entry{.plugin = info,
                     .label = backend_label(info.name, variant),
                     .variant = variant,
                     .backend = {},
                     .probe = {},
                     .capabilities = {},
                     .options_refused = {}};
  if (!info.loaded) {
    entry.probe.reason = "failed to load: " + info.error;
  } else if (Result<BackendPtr> created = registry_.create(info.name, options); !created) {
    // A variant the host offered was not asked for: its refusal only makes it unavailable.
    if (created.error().code == ErrorCode::kInvalidArgument && variant.empty()) {
      entry.options_refused = created.error().message;
    }
    entry.probe.reason = "cannot be created: " + created.error().describe();
  } else {
    entry.backend = std::move(*created);
    entry.probe = entry.backend->probe();
    entry.variant = entry.probe.variant;
    entry.label = backend_label(info.name, entry.variant);
    entry.capabilities = entry.backend->capabilities(limits);
  }
  entries_.push_back(std::move(entry));
}

Status BackendCatalog::options_status() const {
  for (const CatalogEntry& entry : entries_) {
    if (!entry.options_refused.empty())
      return fail(ErrorCode::kInvalidArgument, entry.options_refused);
  }
  return {};
}

std::vector<BackendCandidate> for_allow_list(std::vector<BackendCandidate> candidates) {
  for (BackendCandidate& c : candidates) {
    if (c.available && !carries_allow_list(c.capabilities)) {
      c.available = false;
      c.reason = "it cannot carry a network allow-list (--allow-net)";
    }
  }
  return candidates;
}

Result<BackendChoice> choose_from(const BackendCatalog& catalog, const Limits& limits,
                                  std::string_view wanted, bool allow_unisolated, bool allow_list) {
  if (Status refused = catalog.options_status(); !refused) return std::unexpected(refused.error());
  const auto candidates = [&](const BackendCatalog& from) {
    return allow_list ? for_allow_list(from.candidates()) : from.candidates();
  };
  Result<BackendChoice> choice = choose_backend(candidates(catalog), wanted, allow_unisolated);
  if (!choice && catalog.entries().size() == 1) {
    const BackendCatalog all(limits, {}, catalog.options());
    Result<BackendChoice> again = choose_backend(candidates(all), wanted, allow_unisolated);
    if (!again) return again;
  }
  return choice;
}

BackendCatalog::~BackendCatalog() {
  // Backends go back to their plugins before the registry dlcloses them.
  entries_.clear();
}

std::vector<BackendCandidate> BackendCatalog::candidates() const {
  std::vector<BackendCandidate> out;
  out.reserve(entries_.size());
  for (const CatalogEntry& entry : entries_) {
    out.push_back(BackendCandidate{.name = entry.label,
                                   .version = entry.plugin.version,
                                   .available = entry.backend != nullptr && entry.probe.available,
                                   .reason = entry.probe.reason,
                                   .capabilities = entry.capabilities,
                                   .plugin = entry.plugin.name,
                                   .opt_in = entry.label != entry.plugin.name});
  }
  return out;
}

Backend* BackendCatalog::backend(const std::string& name) const {
  const auto it = std::ranges::find_if(
      entries_, [&](const CatalogEntry& entry) { return entry.label == name; });
  if (it != entries_.end()) return it->backend.get();
  // `-b container --runtime runsc`: the plugin's one entry, labelled by its variant.
  const auto of_plugin = [&](const CatalogEntry& entry) { return entry.plugin.name == name; };
  return std::ranges::count_if(entries_, of_plugin) == 1
             ? std::ranges::find_if(entries_, of_plugin)->backend.get()
             : nullptr;
}

}  // namespace cordon::frontend
