// Finds backend plugins, checks their ABI, and creates backends by name.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/backend.h"
#include "cordon/backend_options.h"
#include "cordon/error.h"

namespace cordon {

struct PluginInfo {
  std::filesystem::path path;
  // From the descriptor; when it never loaded, taken from the file name
  // (cordon-backend-NAME.so -> NAME) so create(NAME) can say why it failed.
  std::string name;
  std::string version;  // empty when it never loaded
  bool loaded = false;
  std::string error;  // why it failed to load (dlopen error, missing symbol, ABI)
};

// A backend a plugin made, seen through the C boundary (plugin_abi.h). Destroy it before
// the registry that made it (which dlcloses the plugin).
using BackendPtr = std::unique_ptr<Backend>;

// How a session's calls reach a plugin's BackendSession. A plugin built on
// cordon/plugin_export.h against this very library (every in-tree backend) already shares
// its C++: its session calls are C++ calls (kInProcessWhenShared, the default). kJson makes
// them cross as JSON like any other plugin's, for the tests that check both give the same.
enum class SessionCalls { kInProcessWhenShared, kJson };

class PluginRegistry {
 public:
  PluginRegistry();
  ~PluginRegistry();  // dlcloses the plugins: destroy every backend first
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // The default search path, first match of a name wins: each dir of
  // $CORDON_PLUGIN_PATH (colon-separated), then the plugin folders of the tree this
  // library belongs to (cordon/install_layout.h: the build tree's and the configured install
  // dir, or an installed prefix's own). With $CORDON_PLUGIN_PATH_ONLY=1, only
  // $CORDON_PLUGIN_PATH.
  [[nodiscard]] static std::vector<std::filesystem::path> default_search_path();

  // Loads every file named "cordon-backend-*.so" in `dirs`. Only the descriptor
  // function is called; no backend is created. Plugins that fail are kept, with reason.
  void discover(const std::vector<std::filesystem::path>& dirs);
  // Loads only the plugin for backend `name` when its file is where the naming rule puts
  // it (the first "cordon-backend-NAME.so" in `dirs` that loads as NAME), else falls
  // back to discover(dirs). A run that names its backend pays for one dlopen, not all.
  void discover_named(const std::vector<std::filesystem::path>& dirs, std::string_view name);
  // Loads one file (for tests and explicit paths).
  void load_file(const std::filesystem::path& path);

  [[nodiscard]] const std::vector<PluginInfo>& plugins() const;
  [[nodiscard]] std::vector<std::string> loaded_names() const;

  // Creates backend `name` with `options` (its own settings: pool size, engine, ...),
  // through the plugin's create. A value the backend cannot honour is refused with its
  // reason (kInvalidArgument).
  [[nodiscard]] Result<BackendPtr> create(std::string_view name,
                                          const BackendOptions& options = {}) const;
  // For tests: how the sessions of the backends created after it take their calls.
  void set_session_calls(SessionCalls calls) { session_calls_ = calls; }

 private:
  struct Loaded;
  std::vector<PluginInfo> infos_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
  SessionCalls session_calls_ = SessionCalls::kInProcessWhenShared;
};

}  // namespace cordon
