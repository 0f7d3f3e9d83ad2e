// The loader side of the C boundary (plugin_abi.h): a cordon::Backend over a plugin's
// descriptor and handle, so the rest of cordon calls a plugin as any Backend. Requests go
// out and results come back as JSON (plugin_wire.h, result_json.h); the observer and the
// cancel token cross as the C struct cordon_run_events. A session call of a plugin whose
// session functions are this library's own is a C++ call (plugin_backend.cpp, PluginSession). Its
// plugin-side counterpart for C++ backends is cordon/plugin_export.h.
#pragma once

#include <mutex>
#include <string>

#include "cordon/backend.h"
#include "cordon/plugin_abi.h"
#include "cordon/plugin_registry.h"

namespace cordon {

class PluginBackend final : public Backend {
 public:
  // Takes `handle` (made by `descriptor`'s create) and gives it back to destroy at the end.
  // `session_calls`: PluginRegistry::SessionCalls.
  PluginBackend(const cordon_plugin_descriptor* descriptor, cordon_backend* handle,
                SessionCalls session_calls);
  ~PluginBackend() override;
  PluginBackend(const PluginBackend&) = delete;
  PluginBackend& operator=(const PluginBackend&) = delete;

  [[nodiscard]] std::string_view name() const override { return descriptor_->name; }
  [[nodiscard]] std::string_view version() const override { return descriptor_->version; }
  // From the plugin's probe JSON ("variant"), asked once: it is fixed when created.
  [[nodiscard]] std::string variant() const override;
  // A plugin's answer that is missing or not the JSON agreed on is the plugin's failure:
  // probe unavailable, no capabilities, a sandbox error, a kPlugin error; each says so.
  [[nodiscard]] Probe probe() const override;
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override;
  // The plugin's prepare (ABI 3.1), its reason prefixed with the plugin's name; nothing to
  // do for a plugin without one (a 3.0 plugin prepares in its run).
  [[nodiscard]] Result<void> prepare() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;
  // The plugin's own plan, or the default (Backend::describe_plan) when it has none.
  [[nodiscard]] Result<Plan> describe_plan(const RunRequest& request) const override;
  // The plugin's session_open (ABI 3.4); a plugin without it holds no sessions (refused
  // with the reason, as Backend's default).
  [[nodiscard]] Result<std::unique_ptr<BackendSession>> open_session(
      const SessionOptions& options) override;

 private:
  const cordon_plugin_descriptor* descriptor_;
  cordon_backend* handle_;
  SessionCalls session_calls_;
  mutable std::once_flag variant_once_;
  mutable std::string variant_;
};

}  // namespace cordon
