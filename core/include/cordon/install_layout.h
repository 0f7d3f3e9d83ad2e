// Where cordon's parts are at run time: the plugin folders and the helper binaries
// (cordon-reaper, cordon-ns-init, cordon-oci-init) of the tree this libcordon-core belongs to.
//
// The build tree's library uses the build tree's folders. An installed library uses the
// folders beside its own location (dladdr), at the same relative places as in the install
// (<libdir>/cordon/plugins, <libexecdir>/cordon), so a prefix works wherever it is put —
// /usr from the .deb, a staging dir from `cmake --install --prefix` — with no environment
// variable, and an installed cordon never loads anything from a build tree that happens to
// exist on the same machine.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace cordon {

struct InstallLayout {
  bool build_tree = false;                     // this is the build tree's libcordon-core
  std::filesystem::path library_dir;           // where libcordon-core is ("" if unknown)
  std::vector<std::filesystem::path> plugins;  // plugin folders, in search order
  std::vector<std::filesystem::path> libexec;  // helper folders, in search order
};

// Worked out once per process.
[[nodiscard]] const InstallLayout& install_layout();

// A helper binary by file name: $CORDON_LIBEXEC_DIR/<name> when set and executable, else
// the first executable <dir>/<name> of install_layout().libexec; nullopt when none is.
[[nodiscard]] std::optional<std::filesystem::path> find_libexec_helper(std::string_view name);

}  // namespace cordon
