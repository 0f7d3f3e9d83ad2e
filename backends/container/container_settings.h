// The container backend's settings as its plugin is asked for them: BackendOptions given
// by the caller (flags of the CLI, the inspector), each unset one from its environment
// variable, validated so that a value the backend cannot honour fails creation with why.
#pragma once

#include "container_plan.h"
#include "cordon/backend_options.h"
#include "cordon/error.h"

namespace cordon::oci {

// Options given win over CORDON_CONTAINER_POOL_SIZE, CORDON_CONTAINER_ENGINE and
// CORDON_CONTAINER_IMAGE. Refused (kInvalidArgument or kUnavailable, with the reason): an
// OCI runtime given that is unknown or unusable here (probe_runtime()), an engine given
// that is not podman/docker or not installed, an engine without an image or an image
// without an engine (from either source), a runtime other than runc in engine mode, a
// runsc platform the installed runsc does not have or cannot use (naming those it has).
[[nodiscard]] Result<ContainerOptions> container_settings(const BackendOptions& given);

}  // namespace cordon::oci
