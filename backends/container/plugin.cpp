// The plugin entry point of the container backend.
#include <cstdlib>
#include <new>

#include "container_backend.h"
#include "cordon/plugin_abi.h"

namespace {

// A long-running host of the plugin (a server, the inspector) asks for a warm pool with
// CORDON_CONTAINER_POOL_SIZE; the one-shot CLI leaves it unset and runs cold.
cordon::Backend* create_backend() {
  cordon::oci::ContainerOptions options;
  if (const char* pool = std::getenv("CORDON_CONTAINER_POOL_SIZE"); pool != nullptr) {
    options.pool_size = std::strtoul(pool, nullptr, 10);
  }
  // Engine mode instead of bundles: CORDON_CONTAINER_ENGINE=podman CORDON_CONTAINER_IMAGE=…
  if (const char* engine = std::getenv("CORDON_CONTAINER_ENGINE"); engine != nullptr) {
    options.engine = engine;
    const char* image = std::getenv("CORDON_CONTAINER_IMAGE");
    options.image = image != nullptr ? image : "";
  }
  return new (std::nothrow) cordon::oci::ContainerBackend(options);
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
};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
