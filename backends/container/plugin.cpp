// The plugin entry point of the container backend.
#include <new>

#include "container_backend.h"
#include "container_settings.h"
#include "cordon/plugin_export.h"

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

}  // namespace

CORDON_EXPORT_BACKEND("container", "0.1.0", make_backend)
