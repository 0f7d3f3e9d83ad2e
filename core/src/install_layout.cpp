#include "cordon/install_layout.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace cordon {
namespace {

namespace fs = std::filesystem;

// The folder this libcordon-core was loaded from, or "" when the loader cannot say.
fs::path own_library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&install_layout), &info) == 0 || info.dli_fname == nullptr ||
      info.dli_fname[0] == '\0') {
    return {};
  }
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(info.dli_fname), ec), ec);
  return ec ? fs::path{} : dir.parent_path();
}

bool same_dir(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

InstallLayout work_out_layout() {
  InstallLayout layout;
  layout.library_dir = own_library_dir();
  if (layout.library_dir.empty()) {
    // No location to go by (a static link, say): the configured install dirs.
    layout.plugins = {CORDON_INSTALL_PLUGIN_DIR};
    layout.libexec = {CORDON_INSTALL_LIBEXEC_DIR};
    return layout;
  }
  if (same_dir(layout.library_dir, CORDON_BUILD_LIB_DIR)) {
    // The build tree, as before installs were relocatable: its own folders, then the
    // configured install dirs (a plugin installed there still shows in `cordon backends`).
    layout.build_tree = true;
    std::error_code ec;
    if (fs::is_directory(CORDON_BUILD_PLUGIN_DIR, ec))
      layout.plugins.emplace_back(CORDON_BUILD_PLUGIN_DIR);
    layout.plugins.emplace_back(CORDON_INSTALL_PLUGIN_DIR);
    layout.libexec = {CORDON_BUILD_LIBEXEC_DIR, CORDON_INSTALL_LIBEXEC_DIR};
    return layout;
  }
  // Installed: only the prefix this library is in. Not the configured dirs too — a
  // staged or moved prefix would otherwise mix in another installation's plugins.
  layout.plugins = {(layout.library_dir / CORDON_LIB_TO_PLUGIN_DIR).lexically_normal()};
  layout.libexec = {(layout.library_dir / CORDON_LIB_TO_LIBEXEC_DIR).lexically_normal()};
  return layout;
}

bool is_executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

}  // namespace

const InstallLayout& install_layout() {
  // Never destroyed: a warm pool's build still in progress at exit reads it (warm_pool.h).
  static const InstallLayout& layout = *new InstallLayout(work_out_layout());
  return layout;
}

std::optional<fs::path> find_libexec_helper(std::string_view name) {
  if (const char* dir = std::getenv("CORDON_LIBEXEC_DIR"); dir != nullptr && *dir != '\0') {
    if (fs::path p = fs::path(dir) / name; is_executable(p)) return p;
  }
  for (const fs::path& dir : install_layout().libexec) {
    if (fs::path p = dir / name; is_executable(p)) return p;
  }
  return std::nullopt;
}

}  // namespace cordon
