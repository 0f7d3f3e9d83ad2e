// The versioned C entry point of a backend plugin.
//
// Each backend is a MODULE library with hidden visibility that exports exactly one
// symbol, `cordon_plugin_entry`, returning a pointer to a static descriptor. The loader
// checks abi_major (equal), abi_minor (not newer than the loader's) and struct_size
// (large enough) before it calls anything else in the plugin.
//
// C++ types (cordon::Backend) cross this boundary only because every plugin is built
// in-tree with the same compiler, standard library and flags as the loader; the
// descriptor itself is plain C so a mismatched plugin is detected, not crashed into.
#pragma once

#include <cstddef>
#include <cstdint>

// Major 2: the run driver's StartedTree (run_driver.h) and RunObserver gained virtual
// members (resource samples), so a plugin built against 1.x cannot run with this core.
// Minor 1: the descriptor ends with create_with_options (the backend's own settings,
// cordon/backend_options.h). A 2.0 plugin's shorter descriptor still loads.
#define CORDON_PLUGIN_ABI_MAJOR 2
#define CORDON_PLUGIN_ABI_MINOR 1
#define CORDON_PLUGIN_ENTRY_SYMBOL "cordon_plugin_entry"

namespace cordon {
class Backend;
}

extern "C" {

// A backend's options (cordon::BackendOptions) as C data. The caller sets struct_size to
// sizeof as it saw it; a plugin reads a field only when struct_size covers it, so fields
// are only ever appended. Strings are null when unset and live for the create call only.
struct cordon_backend_options {
  std::size_t struct_size;
  std::int64_t pool_size;  // -1: unset
  const char* engine;
  const char* image;
  const char* runtime;
};

struct cordon_plugin_descriptor {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  std::uint32_t struct_size;  // sizeof(cordon_plugin_descriptor) as the plugin saw it
  const char* name;           // backend name, e.g. "subprocess"
  const char* version;        // backend version, e.g. "0.1.0"
  // Returns a new backend or null on failure. Not called for listing.
  cordon::Backend* (*create)();
  void (*destroy)(cordon::Backend*);
  // ABI 2.1 (present when struct_size covers it; may be null): creates a backend with
  // `options`. Returns null on failure with the reason, NUL-terminated, in `error` (at most
  // error_size bytes): an option the backend has but cannot honour. Options a backend does
  // not have are ignored. A plugin without it is created with create() when no option is set.
  cordon::Backend* (*create_with_options)(const cordon_backend_options* options, char* error,
                                          std::size_t error_size);
};

// The size of an ABI 2.0 descriptor: the smallest the loader accepts.
#define CORDON_PLUGIN_DESCRIPTOR_MIN_SIZE offsetof(cordon_plugin_descriptor, create_with_options)

using cordon_plugin_entry_fn = const cordon_plugin_descriptor* (*)();

}  // extern "C"

// For plugin sources: defines the exported entry point returning `descriptor`.
#define CORDON_DEFINE_PLUGIN(descriptor)                                            \
  extern "C" __attribute__((visibility("default"))) const cordon_plugin_descriptor* \
  cordon_plugin_entry() {                                                           \
    return &(descriptor);                                                           \
  }
