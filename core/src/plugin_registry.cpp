#include "cordon/plugin_registry.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <system_error>

#include "cordon/install_layout.h"
#include "cordon/plugin_abi.h"
#include "cordon/plugin_options.h"
#include "cordon/text.h"
#include "plugin_backend.h"

namespace cordon {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFilePrefix = "cordon-backend-";
constexpr std::string_view kFileSuffix = ".so";

bool is_plugin_file_name(std::string_view name) {
  return name.size() > kFilePrefix.size() + kFileSuffix.size() && name.starts_with(kFilePrefix) &&
         name.ends_with(kFileSuffix);
}

// The backend name a file stands for before (or without) loading it:
// "cordon-backend-subprocess.so" -> "subprocess". Lets `create("x")` explain why x
// failed instead of claiming it does not exist.
std::string name_from_file(const fs::path& path) {
  std::string file = path.filename().string();
  if (!is_plugin_file_name(file)) return file;
  return file.substr(kFilePrefix.size(), file.size() - kFilePrefix.size() - kFileSuffix.size());
}

std::string dl_error(std::string_view fallback) {
  const char* message = ::dlerror();  // thread-local in glibc
  return message ? std::string(message) : std::string(fallback);
}

std::string abi_text(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// The checks made before anything but the entry function runs. The first three fields
// are the same in every ABI version, so they are safe to read from any descriptor;
// the rest only once the major and struct_size say they are there.
std::string check_descriptor(const cordon_plugin_descriptor* d) {
  if (d == nullptr) return "entry point returned no descriptor";
  const std::string ours = abi_text(CORDON_PLUGIN_ABI_MAJOR, CORDON_PLUGIN_ABI_MINOR);
  if (d->abi_major != CORDON_PLUGIN_ABI_MAJOR) {
    return "plugin ABI " + abi_text(d->abi_major, d->abi_minor) + " is incompatible with " +
           "this cordon's ABI " + ours + " (major version differs: rebuild the plugin against " +
           "cordon/plugin_abi.h " + std::to_string(CORDON_PLUGIN_ABI_MAJOR) + ".x)";
  }
  if (d->abi_minor > CORDON_PLUGIN_ABI_MINOR) {
    return "plugin ABI " + abi_text(d->abi_major, d->abi_minor) + " is newer than " + ours;
  }
  // An older minor's descriptor is shorter: the fields it lacks are read as absent.
  if (d->struct_size < CORDON_PLUGIN_DESCRIPTOR_MIN_SIZE) {
    return "descriptor is " + std::to_string(d->struct_size) + " bytes, expected at least " +
           std::to_string(CORDON_PLUGIN_DESCRIPTOR_MIN_SIZE);
  }
  if (d->name == nullptr || d->name[0] == '\0') return "descriptor has no backend name";
  if (d->version == nullptr) return "descriptor has no version";
  if (d->create == nullptr || d->destroy == nullptr) return "descriptor lacks create/destroy";
  // describe_plan may be null (the plan is then rendered from the capabilities).
  if (d->probe == nullptr || d->capabilities == nullptr || d->run == nullptr ||
      d->free_text == nullptr) {
    return "descriptor lacks probe, capabilities, run or free_text";
  }
  return {};
}

}  // namespace

struct PluginRegistry::Loaded {
  void* handle = nullptr;
  const cordon_plugin_descriptor* descriptor = nullptr;
  std::string name;
  fs::path path;

  Loaded(void* h, const cordon_plugin_descriptor* d, fs::path p)
      : handle(h), descriptor(d), name(d->name), path(std::move(p)) {}
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  ~Loaded() { ::dlclose(handle); }
};

PluginRegistry::PluginRegistry() = default;
PluginRegistry::~PluginRegistry() = default;

std::vector<fs::path> PluginRegistry::default_search_path() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("CORDON_PLUGIN_PATH")) {
    std::string_view rest = env;
    for (;;) {
      const auto colon = rest.find(':');
      if (const auto dir = rest.substr(0, colon); !dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  // CORDON_PLUGIN_PATH_ONLY=1: nothing but CORDON_PLUGIN_PATH (a test or a deployment
  // that wants an exact set of backends, with no build tree or install dir mixed in).
  if (const char* only = std::getenv("CORDON_PLUGIN_PATH_ONLY");
      only && std::string_view(only) == "1") {
    return dirs;
  }
  // The plugin folders of the tree this library belongs to: an installed cordon finds its
  // own prefix's and never the build tree's.
  const auto& own = install_layout().plugins;
  dirs.insert(dirs.end(), own.begin(), own.end());
  return dirs;
}

void PluginRegistry::discover(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> seen;
  for (const auto& dir : dirs) {
    std::error_code ec;
    // The same folder twice in the search path (e.g. CORDON_PLUGIN_PATH naming the build
    // tree) is searched once.
    const fs::path canonical = fs::weakly_canonical(dir, ec);
    if (ec || std::ranges::find(seen, canonical) != seen.end()) continue;
    seen.push_back(canonical);

    std::vector<fs::path> files;
    // Search path entries are optional: a missing folder is not an error.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (is_plugin_file_name(it->path().filename().string())) files.push_back(it->path());
    }
    std::ranges::sort(files);  // deterministic order: first file of a name wins
    for (const auto& file : files) load_file(file);
  }
}

void PluginRegistry::discover_named(const std::vector<fs::path>& dirs, std::string_view name) {
  const std::string file = std::string(kFilePrefix) + std::string(name) + std::string(kFileSuffix);
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::exists(dir / file, ec)) continue;
    load_file(dir / file);
    if (std::ranges::find(loaded_, name, &Loaded::name) != loaded_.end()) return;
    break;  // the file of that name failed or names another backend: look at them all
  }
  discover(dirs);
}

void PluginRegistry::load_file(const fs::path& path) {
  std::error_code ec;
  // dlopen treats a name without '/' as a library to search for; make it a path. Made
  // normal too, so "dir/./x.so" is recognised as the file already listed.
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  const fs::path& where = ec ? path : absolute;
  if (std::ranges::any_of(infos_, [&](const PluginInfo& info) { return info.path == where; })) {
    return;  // the same file again
  }
  PluginInfo info;
  info.path = where;
  info.name = name_from_file(where);
  auto failed = [&](std::string why) {
    info.error = std::move(why);
    infos_.push_back(std::move(info));
  };

  struct stat st{};
  if (::stat(where.c_str(), &st) != 0) {
    return failed("cannot open: " + std::error_code(errno, std::generic_category()).message());
  }
  // RTLD_NOW: an unresolved symbol fails here with a message, not later mid-run.
  // RTLD_LOCAL: two plugins' internals never bind to each other.
  void* handle = ::dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return failed("dlopen failed: " + dl_error("unknown error"));

  ::dlerror();  // clear, so a null from dlsym is told apart from a failure
  void* symbol = ::dlsym(handle, CORDON_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    ::dlclose(handle);
    return failed(std::string("missing entry symbol ") + CORDON_PLUGIN_ENTRY_SYMBOL);
  }
  // POSIX guarantees a function pointer round-trips through dlsym's void*.
  const auto entry = reinterpret_cast<cordon_plugin_entry_fn>(symbol);
  const cordon_plugin_descriptor* descriptor = entry();
  if (std::string why = check_descriptor(descriptor); !why.empty()) {
    ::dlclose(handle);
    return failed(std::move(why));
  }
  info.name = descriptor->name;
  info.version = descriptor->version;
  const auto winner = std::ranges::find(loaded_, info.name, &Loaded::name);
  if (winner != loaded_.end()) {
    ::dlclose(handle);
    return failed("shadowed by " + (*winner)->path.string());
  }
  info.loaded = true;
  loaded_.push_back(std::make_unique<Loaded>(handle, descriptor, where));
  infos_.push_back(std::move(info));
}

const std::vector<PluginInfo>& PluginRegistry::plugins() const { return infos_; }

std::vector<std::string> PluginRegistry::loaded_names() const {
  std::vector<std::string> names;
  names.reserve(loaded_.size());
  for (const auto& loaded : loaded_) names.push_back(loaded->name);
  return names;
}

Result<BackendPtr> PluginRegistry::create(std::string_view name,
                                          const BackendOptions& options) const {
  const auto it = std::ranges::find(loaded_, name, &Loaded::name);
  if (it == loaded_.end()) {
    const auto failed = std::ranges::find_if(
        infos_, [&](const PluginInfo& info) { return info.name == name && !info.loaded; });
    const auto names = loaded_names();
    const std::string available =
        names.empty() ? "no backend plugins were found" : "available: " + join(names);
    if (failed != infos_.end()) {
      return fail(ErrorCode::kPlugin, "backend '" + std::string(name) + "' failed to load from " +
                                          failed->path.string() + ": " + failed->error + " (" +
                                          available + ")");
    }
    return fail(ErrorCode::kNotFound,
                "no backend named '" + std::string(name) + "' (" + available + ")");
  }
  const cordon_plugin_descriptor* d = (*it)->descriptor;
  // A plugin older than an option would never read it and run without it: refuse instead.
  if (options.system_root && d->abi_minor < 2) {
    return fail(ErrorCode::kInvalidArgument, "backend '" + std::string(name) + "' (plugin ABI " +
                                                 abi_text(d->abi_major, d->abi_minor) +
                                                 ") predates environments");
  }
  const CBackendOptions c_options(options);
  std::array<char, 1024> error{};
  cordon_backend* handle = d->create(c_options.get(), error.data(), error.size());
  error.back() = '\0';  // a plugin that filled it all still ends here
  if (handle == nullptr && error[0] != '\0') {
    return fail(ErrorCode::kInvalidArgument,
                "backend '" + std::string(name) + "' cannot be created: " + error.data());
  }
  if (handle == nullptr) {
    return fail(ErrorCode::kPlugin, "backend '" + std::string(name) + "' failed to start");
  }
  // Only C crossed: from here on the plugin is a Backend like any other.
  return std::make_unique<PluginBackend>(d, handle, session_calls_);
}

}  // namespace cordon
