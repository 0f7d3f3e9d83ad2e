// The plugin entry point of the subprocess backend.
#include <cstdlib>
#include <cstring>
#include <new>

#include "cordon/plugin_export.h"
#include "subprocess_backend.h"

namespace {

// No pool, engine, image or runtime here: every backend option is ignored.
cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& /*options*/) {
  cordon::subprocess::SubprocessOptions options;
  const char* force = std::getenv("CORDON_SUBPROCESS_FORCE_FALLBACK");
  options.force_fallback = force != nullptr && std::strcmp(force, "1") == 0;
  return new (std::nothrow) cordon::subprocess::SubprocessBackend(options);
}

}  // namespace

CORDON_EXPORT_BACKEND("subprocess", "0.1.0", make_backend)
