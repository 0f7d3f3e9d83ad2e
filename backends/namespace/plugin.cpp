// The plugin entry point of the namespace backend.
#include <cstdlib>
#include <new>
#include <string_view>

#include "cordon/plugin_abi.h"
#include "namespace_backend.h"

namespace {

// A long-running host of the plugin (a server, the inspector) asks for sandboxes built
// ahead of time with CORDON_NAMESPACE_POOL_SIZE; the one-shot CLI leaves it unset.
cordon::Backend* create_backend() {
  cordon::ns::NamespaceOptions options;
  if (const char* pool = std::getenv("CORDON_NAMESPACE_POOL_SIZE"); pool != nullptr) {
    options.pool_size = std::strtoul(pool, nullptr, 10);
  }
  // CORDON_NAMESPACE_PRESTART=python: pooled sandboxes also hold python started ahead.
  if (const char* pre = std::getenv("CORDON_NAMESPACE_PRESTART"); pre != nullptr) {
    options.prestart_python = std::string_view(pre) == "python";
  }
  return new (std::nothrow) cordon::ns::NamespaceBackend(options);
}

void destroy_backend(cordon::Backend* backend) { delete backend; }

const cordon_plugin_descriptor kDescriptor = {
    CORDON_PLUGIN_ABI_MAJOR,
    CORDON_PLUGIN_ABI_MINOR,
    sizeof(cordon_plugin_descriptor),
    "namespace",
    "0.1.0",
    &create_backend,
    &destroy_backend,
};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
