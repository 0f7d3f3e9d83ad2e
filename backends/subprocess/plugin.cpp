// The plugin entry point of the subprocess backend.
#include <cstdlib>
#include <cstring>
#include <new>

#include "cordon/plugin_export.h"
#include "subprocess_backend.h"

namespace {

// No pool, engine, image or runtime here: those options are ignored. With an environment
// the backend is unavailable (SubprocessOptions::environment_asked).
cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& given) {
  cordon::subprocess::SubprocessOptions options;
  options.environment_asked = given.system_root.has_value();
  const char* force = std::getenv("CORDON_SUBPROCESS_FORCE_FALLBACK");
  options.force_fallback = force != nullptr && std::strcmp(force, "1") == 0;
  return new (std::nothrow) cordon::subprocess::SubprocessBackend(options);
}

}  // namespace

CORDON_EXPORT_BACKEND("subprocess", "0.1.0", make_backend)
