// The plugin entry point of the subprocess backend.
#include <cstdlib>
#include <cstring>
#include <new>

#include "cordon/plugin_abi.h"
#include "subprocess_backend.h"

namespace {

cordon::Backend* create_backend() {
  cordon::subprocess::SubprocessOptions options;
  const char* force = std::getenv("CORDON_SUBPROCESS_FORCE_FALLBACK");
  options.force_fallback = force != nullptr && std::strcmp(force, "1") == 0;
  return new (std::nothrow) cordon::subprocess::SubprocessBackend(options);
}

// No pool, engine, image or runtime here: every backend option is ignored.
cordon::Backend* create_with_options(const cordon_backend_options* /*options*/, char* /*error*/,
                                     std::size_t /*error_size*/) {
  return create_backend();
}

void destroy_backend(cordon::Backend* backend) { delete backend; }

const cordon_plugin_descriptor kDescriptor = {
    CORDON_PLUGIN_ABI_MAJOR,
    CORDON_PLUGIN_ABI_MINOR,
    sizeof(cordon_plugin_descriptor),
    "subprocess",
    "0.1.0",
    &create_backend,
    &destroy_backend,
    &create_with_options,
};

}  // namespace

CORDON_DEFINE_PLUGIN(kDescriptor)
