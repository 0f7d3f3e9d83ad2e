#include "frontend/backend_catalog.h"

#include <algorithm>
#include <utility>

#include "cordon/claims.h"

namespace cordon::frontend {

BackendCatalog::BackendCatalog(const Limits& limits, std::string_view only, BackendOptions options)
    : search_path_(PluginRegistry::default_search_path()), options_(std::move(options)) {
  if (only.empty() || only == kAutoBackend) {
    registry_.discover(search_path_);
  } else {
    registry_.discover_named(search_path_, only);
  }
  for (const PluginInfo& info : registry_.plugins()) {
    CatalogEntry entry{
        .plugin = info, .backend = {}, .probe = {}, .capabilities = {}, .options_refused = {}};
    if (!info.loaded) {
      entry.probe.reason = "failed to load: " + info.error;
    } else if (Result<BackendPtr> created = registry_.create(info.name, options_); !created) {
      if (created.error().code == ErrorCode::kInvalidArgument) {
        entry.options_refused = created.error().message;
      }
      entry.probe.reason = "cannot be created: " + created.error().describe();
    } else {
      entry.backend = std::move(*created);
      entry.probe = entry.backend->probe();
      entry.capabilities = entry.backend->capabilities(limits);
    }
    entries_.push_back(std::move(entry));
  }
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
    out.push_back(BackendCandidate{.name = entry.plugin.name,
                                   .version = entry.plugin.version,
                                   .available = entry.backend != nullptr && entry.probe.available,
                                   .reason = entry.probe.reason,
                                   .capabilities = entry.capabilities});
  }
  return out;
}

Backend* BackendCatalog::backend(const std::string& name) const {
  const auto it = std::ranges::find_if(
      entries_, [&](const CatalogEntry& entry) { return entry.plugin.name == name; });
  return it == entries_.end() ? nullptr : it->backend.get();
}

}  // namespace cordon::frontend
