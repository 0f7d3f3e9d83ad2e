#include "container_settings.h"

#include <cstdlib>
#include <string>

#include "runsc_platform.h"
#include "runtime_cli.h"

namespace cordon::oci {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

Result<ContainerOptions> container_settings(const BackendOptions& given) {
  ContainerOptions options;
  if (given.pool_size) {
    options.pool_size = *given.pool_size;
  } else if (const auto pool = env("CORDON_CONTAINER_POOL_SIZE")) {
    options.pool_size = std::strtoul(pool->c_str(), nullptr, 10);
  }

  const std::optional<std::string> engine =
      given.engine ? given.engine : env("CORDON_CONTAINER_ENGINE");
  const std::optional<std::string> image =
      given.image ? given.image : env("CORDON_CONTAINER_IMAGE");
  if (given.image && !engine) {
    return fail(ErrorCode::kInvalidArgument,
                "--image is for engine mode: it needs --engine podman (or docker)");
  }
  if (engine) {
    // The environment alone keeps its old meaning: a missing image or engine makes the
    // backend unavailable with the reason (probe), not a failed creation.
    if (given.engine && *engine != "podman" && *engine != "docker") {
      return fail(ErrorCode::kInvalidArgument,
                  "--engine " + *engine + ": unknown engine (podman or docker)");
    }
    if (given.engine && find_tool(*engine).empty()) {
      return fail(ErrorCode::kUnavailable,
                  "--engine " + *engine + ": " + *engine + " is not installed");
    }
    if ((given.engine || given.image) && (!image || image->empty())) {
      return fail(ErrorCode::kInvalidArgument,
                  "--engine " + *engine +
                      " needs --image REF (an image the engine already has: nothing is pulled)");
    }
    options.engine = *engine;
    options.image = image.value_or("");
  }

  if (given.runsc_platform) {
    // Checked here, against the installed runsc, so a name it does not have is refused with
    // those it has (a platform is runsc's only: runc's runs ignore it).
    const RuntimeProbe probe = probe_runtime("runsc", *given.runsc_platform);
    if (!probe.usable) {
      return fail(
          probe.path.empty() ? ErrorCode::kUnavailable : ErrorCode::kInvalidArgument,
          std::string(kRunscPlatformOption) + " " + *given.runsc_platform + ": " + probe.reason);
    }
    options.runsc_platform = *given.runsc_platform;
  }
  if (given.runtime) {
    // Engine mode hands podman `--runtime runc` (engine_run.h): no other is driven there.
    if (!options.engine.empty() && *given.runtime != "runc") {
      return fail(ErrorCode::kInvalidArgument,
                  "--runtime " + *given.runtime + ": engine mode runs containers with runc only");
    }
    const RuntimeProbe probe = probe_runtime(*given.runtime, options.runsc_platform);
    if (!probe.usable) {
      return fail(ErrorCode::kUnavailable, "--runtime " + *given.runtime + ": " + probe.reason);
    }
    options.runtime = *given.runtime;
  }
  if (given.system_root) {
    if (!options.engine.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "engine mode runs the engine's image (--image), not an environment");
    }
    if (given.system_root->empty() || given.system_root->front() != '/') {
      return fail(ErrorCode::kInvalidArgument, "an environment's root must be an absolute path");
    }
    options.system_root = *given.system_root;
    options.system_root_digest = given.system_root_digest.value_or("");
  }
  return options;
}

}  // namespace cordon::oci
