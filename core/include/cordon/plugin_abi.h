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

#include <cstdint>

// Major 2: the run driver's StartedTree (run_driver.h) and RunObserver gained virtual
// members (resource samples), so a plugin built against 1.x cannot run with this core.
#define CORDON_PLUGIN_ABI_MAJOR 2
#define CORDON_PLUGIN_ABI_MINOR 0
#define CORDON_PLUGIN_ENTRY_SYMBOL "cordon_plugin_entry"

namespace cordon {
class Backend;
}

extern "C" {

struct cordon_plugin_descriptor {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  std::uint32_t struct_size;  // sizeof(cordon_plugin_descriptor) as the plugin saw it
  const char* name;           // backend name, e.g. "subprocess"
  const char* version;        // backend version, e.g. "0.1.0"
  // Returns a new backend or null on failure. Not called for listing.
  cordon::Backend* (*create)();
  void (*destroy)(cordon::Backend*);
};

using cordon_plugin_entry_fn = const cordon_plugin_descriptor* (*)();

}  // extern "C"

// For plugin sources: defines the exported entry point returning `descriptor`.
#define CORDON_DEFINE_PLUGIN(descriptor)                                            \
  extern "C" __attribute__((visibility("default"))) const cordon_plugin_descriptor* \
  cordon_plugin_entry() {                                                           \
    return &(descriptor);                                                           \
  }
