// Environments: the root filesystem a run's code sees, named, pinned and described.
//
// An environment is a directory tree (a debootstrap tree, an unpacked OCI image) whose
// /usr, top-level aliases, /etc/ld.so.cache and /etc/alternatives the isolating backends
// show instead of the host's (BackendOptions::system_root; everything else of the sandbox's
// root is cordon's as always). It is pinned by a content digest: sha256 over a manifest of
// every entry below the root, in a fixed order, each with its type, permission bits and
// contents (a file's sha256, a symlink's target). Device nodes, fifos and sockets are left
// out of the manifest and of the store's copy: a sandbox never sees an environment's /dev.
//
// `cordon environment add NAME DIR|IMAGE` copies DIR (or the root filesystem of an image
// podman holds) into cordon's store, hashes the copy (it
// must match the source's digest), measures its inventory (what the tool description
// states about it: interpreter versions, Python packages, common tools) and records the
// three under NAME. A stored copy is never written again, so a run trusts its digest
// without rehashing. `--rootfs DIR` names an unregistered directory instead: hashed when
// used. The default is "host": the host's /usr, not pinned (its packages change under it),
// with an inventory measured when asked.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend_options.h"
#include "cordon/error.h"

namespace cordon::environment {

// The name of the default environment: the host's own /usr.
inline constexpr const char* kHostName = "host";
// Overrides where the store lives (tests; a system-wide store elsewhere).
inline constexpr const char* kStoreEnv = "CORDON_ENVIRONMENTS_DIR";

// "sha256:<64 hex>" of the tree below `root` (see above). Reads every file once.
[[nodiscard]] Result<std::string> tree_digest(const std::filesystem::path& root);

struct Versioned {
  std::string name;
  std::string version;
  bool operator==(const Versioned&) const = default;
};

// What is inside, measured once when an environment is registered.
struct Inventory {
  // As the interpreter's own version probe answered inside a sandbox on this environment
  // ("python": "Python 3.11.2"); empty when it was not measured.
  std::vector<Versioned> interpreters;
  // Third-party Python distributions, from the environment's own metadata (dist-info
  // METADATA, egg-info PKG-INFO), sorted by name.
  std::vector<Versioned> python_packages;
  // Common command-line tools present on the sandbox's PATH, sorted.
  std::vector<std::string> tools;
  bool python = false;  // python3 is on the sandbox's PATH
  bool operator==(const Inventory&) const = default;
};

// Python packages and tools read from the tree below `root` (no code runs). `usr_local`:
// whether /usr/local is part of what the sandbox sees (an environment's is; the host's
// is hidden).
[[nodiscard]] Inventory read_inventory(const std::filesystem::path& root, bool usr_local);

[[nodiscard]] nlohmann::json to_json(const Inventory& inventory);
[[nodiscard]] Inventory inventory_from_json(const nlohmann::json& j);

struct Environment {
  std::string name;
  std::string digest;          // "sha256:..."; empty for the host
  std::filesystem::path root;  // the tree's host path ("/" for the host)
  std::string source;          // what it was added from
  std::string added_at;        // UTC, ISO 8601
  Inventory inventory;
};

// Measures the interpreters of an environment (a run of each version probe in a sandbox
// on `root`); the CLI passes one that builds a namespace backend.
using MeasureInterpreters = std::function<Result<std::vector<Versioned>>(const std::string& root)>;

class Store {
 public:
  // $CORDON_ENVIRONMENTS_DIR, else /var/lib/cordon/environments for root, else
  // $XDG_DATA_HOME/cordon/environments, else ~/.local/share/cordon/environments.
  [[nodiscard]] static Result<std::filesystem::path> default_dir();
  explicit Store(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Names: 1-64 of [a-z0-9._-], starting with a letter or digit; "host" is reserved.
  [[nodiscard]] static Status check_name(const std::string& name);

  // Copies `source` into the store, checks the copy's digest against the source's,
  // measures the inventory and records it under `name`. Fails if the name is taken.
  // `source_label` is what the record names as its source (default: the directory).
  [[nodiscard]] Result<Environment> add(const std::string& name,
                                        const std::filesystem::path& source,
                                        const MeasureInterpreters& measure,
                                        const std::string& source_label = {});
  // The same for an image podman already holds (nothing is pulled): its root filesystem,
  // as `podman image mount` shows it, recorded with the image's name and id as source.
  [[nodiscard]] Result<Environment> add_image(const std::string& name, const std::string& image,
                                              const MeasureInterpreters& measure);
  [[nodiscard]] Result<std::vector<Environment>> list() const;
  [[nodiscard]] Result<Environment> find(const std::string& name) const;
  // Forgets `name`; its tree goes with it unless another name records the same digest.
  [[nodiscard]] Status remove(const std::string& name);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// What a run was asked to run in: --environment NAME (the store's), --rootfs DIR
// (hashed now), or neither (the host). Both at once is an error.
struct Selection {
  std::string name;  // "host", a stored name, or "" for an unregistered --rootfs
  std::string digest;
  std::string root;  // the directory for BackendOptions::system_root; "" for the host
  std::optional<Inventory> inventory{};  // a stored environment's, as measured when added
  // Engine mode (--engine/--image): the container runs the engine's image, whose contents
  // cordon neither pins nor measures; nothing is recorded or stated about it.
  bool engine_image = false;
  [[nodiscard]] bool is_host() const { return root.empty() && !engine_image; }
};
[[nodiscard]] Result<Selection> select(const std::optional<std::string>& environment,
                                       const std::optional<std::string>& rootfs);

// Sets `options` to create backends that show `selection` (BackendOptions::system_root and
// its digest); the host and an engine's image leave them unset.
void show_in(const Selection& selection, BackendOptions& options);

// The stored inventory, else the one the files tell now (the host's /usr without
// /usr/local, which the sandbox hides; an unregistered --rootfs with it); none for an
// engine's image.
[[nodiscard]] Inventory inventory_for(const Selection& selection);

// The sentence of the tool description about the environment: which one, its digest,
// its Python packages ("no third-party Python packages" when none) and its tools.
[[nodiscard]] std::string describe(const Selection& selection, const Inventory& inventory);
// The same, of its inventory_for(): what `prompt`, `mcp`, `run --tool-call` and the
// inspector state.
[[nodiscard]] std::string describe(const Selection& selection);

}  // namespace cordon::environment
