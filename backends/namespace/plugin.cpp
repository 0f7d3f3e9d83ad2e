// The plugin entry point of the namespace backend.
#include <new>

#include "cordon/plugin_abi.h"
#include "namespace_backend.h"

namespace {

cordon::Backend* create_backend() {
  return new (std::nothrow) cordon::ns::NamespaceBackend(cordon::ns::NamespaceOptions{});
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
