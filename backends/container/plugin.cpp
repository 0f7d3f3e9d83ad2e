// The plugin entry point of the container backend.
#include <new>

#include "container_backend.h"
#include "container_settings.h"
#include "cordon/plugin_abi.h"
#include "cordon/plugin_options.h"

namespace {

// A long-running host of the plugin (a server, the inspector) asks for a warm pool with
// the pool_size option (or CORDON_CONTAINER_POOL_SIZE); the one-shot CLI leaves it unset
// and runs cold. Engine mode: the engine and image options (or CORDON_CONTAINER_ENGINE /
// CORDON_CONTAINER_IMAGE). container_settings() says which values are refused.
cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& given) {
  auto options = cordon::oci::container_settings(given);
  if (!options) return std::unexpected(options.error());
  return new (std::nothrow) cordon::oci::ContainerBackend(std::move(*options));
}

cordon::Backend* create_backend() {
  auto made = make_backend({});
  return made ? *made : nullptr;
}

cordon::Backend* create_with_options(const cordon_backend_options* options, char* error,
                                     std::size_t error_size) {
  return cordon::create_backend_from_c(options, error, error_size, &make_backend);
}

void destroy_backend(cordon::Backend* backend) { delete backend; }

const cordon_plugin_descriptor kDescriptor = {
    CORDON_PLUGIN_ABI_MAJOR,
    CORDON_PLUGIN_ABI_MINOR,
    sizeof(cordon_plugin_descriptor),
    "container",
    "0.1.0",
    &create_backend,
    &destroy_backend,
    &create_with_options,
};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
