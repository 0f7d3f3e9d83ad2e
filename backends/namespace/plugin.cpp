// The plugin entry point of the namespace backend.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/plugin_export.h"
#include "cordon/text.h"
#include "namespace_backend.h"

namespace {

// As root, the set-up process binds an environment's tree as the sandbox's own host uid (a
// uid slot, never 0: child_setup.cpp), so every directory from / down to the tree must let
// others through; a tree below /root or a 0700 temporary directory would otherwise fail at
// the first run with "mount: bind ...: Permission denied". The directory that stops them,
// or "" when none does. (Without root the sandbox's uid is the caller's own, which reaches
// whatever the caller named.)
std::string first_closed_directory(const std::filesystem::path& root) {
  if (::geteuid() != 0) return "";
  for (std::filesystem::path p = root; !p.empty(); p = p.parent_path()) {
    struct stat st{};
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) return p.string();
    if (p == p.root_path()) break;
  }
  return "";
}

// A long-running host of the plugin (a server, the inspector) asks for sandboxes built
// ahead of time with the pool_size option, else CORDON_NAMESPACE_POOL_SIZE; the one-shot
// CLI leaves both unset. The backend has no engine, image or runtime: those are ignored.
cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& given) {
  cordon::ns::NamespaceOptions options;
  if (given.pool_size) {
    options.pool_size = *given.pool_size;
  } else if (const char* pool = std::getenv("CORDON_NAMESPACE_POOL_SIZE"); pool != nullptr) {
    options.pool_size = std::strtoul(pool, nullptr, 10);
  }
  // The prestart option, else CORDON_NAMESPACE_PRESTART: a comma-separated list of the
  // interpreters pooled sandboxes also hold started ahead, "python" and "sh", each a pool of
  // its own; "none" (or unset): neither. Nothing else is offered.
  std::optional<std::string> prestart = given.prestart;
  if (!prestart) {
    if (const char* pre = std::getenv("CORDON_NAMESPACE_PRESTART"); pre != nullptr) prestart = pre;
  }
  if (prestart && *prestart != "none") {
    for (const std::string_view item : cordon::split(*prestart, ',')) {
      if (item == "python") {
        options.prestart_python = true;
      } else if (item == "sh") {
        options.prestart_sh = true;
      } else {
        return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                            "namespace: --prestart takes python, sh, both (python,sh) or none "
                            "(got '" +
                                *prestart + "')");
      }
    }
  }
  // CORDON_NAMESPACE_SPAWNER: who clones the set-up processes (NamespaceOptions::
  // setup_spawner); for benchmarks that compare both within one build.
  if (const char* sp = std::getenv("CORDON_NAMESPACE_SPAWNER"); sp != nullptr) {
    const std::string v = sp;
    using S = cordon::ns::NamespaceOptions::Spawner;
    if (v == "pool") {
      options.setup_spawner = S::kWithPool;
    } else if (v == "always") {
      options.setup_spawner = S::kAlways;
    } else if (v == "never") {
      options.setup_spawner = S::kNever;
    } else {
      return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                          "CORDON_NAMESPACE_SPAWNER takes pool, always or never (got '" + v + "')");
    }
  }
  if (given.system_root) {
    if (given.system_root->empty() || given.system_root->front() != '/') {
      return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                          "namespace: an environment's root must be an absolute path");
    }
    if (const std::string closed = first_closed_directory(*given.system_root); !closed.empty()) {
      return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                          "namespace: the environment " + *given.system_root +
                              " cannot be shown: " + closed +
                              " does not let other users through (no o+x), and the sandbox "
                              "binds it as its own uid, not as root; move the tree, or `cordon "
                              "environment add` it");
    }
    options.system_root = *given.system_root;
    options.system_root_digest = given.system_root_digest.value_or("");
  }
  return new (std::nothrow) cordon::ns::NamespaceBackend(options);
}

}  // namespace

CORDON_EXPORT_BACKEND("namespace", "0.1.0", make_backend)
