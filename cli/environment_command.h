// `cordon environment add|list|rm`, and the --environment/--rootfs flags every command that
// creates backends shares (frontend/environment.h says what an environment is).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cordon/backend_options.h"
#include "cordon/error.h"
#include "cordon/request.h"
#include "frontend/backend_catalog.h"
#include "frontend/environment.h"
#include "run_options.h"

namespace cordon::cli {

struct EnvironmentOptions {
  enum class Action { kList, kAdd, kRemove };
  Action action = Action::kList;
  std::string name;    // add, rm
  std::string source;  // add: the directory, or an image podman holds
  bool json = false;   // list
};

[[nodiscard]] int environment_command(const EnvironmentOptions& options);

// The environment the flags name (the host's when neither is given), with `options` set to
// show it (system_root and its digest). A stored name that does not exist, or a --rootfs
// that cannot be hashed, is an error naming the flag.
[[nodiscard]] Result<environment::Selection> apply_environment(const EnvironmentFlags& flags,
                                                               BackendOptions& options);

// What a run's Result records of it; nothing for an engine's image (not pinned).
[[nodiscard]] std::optional<EnvironmentRef> environment_ref(
    const environment::Selection& selection);

// The backend the audit's positive controls run on (subprocess, on the host), from
// `catalog`, or, when `catalog` was made for an environment (which leaves subprocess
// unavailable), from `own`, a catalog of its own made here. Null when there is none.
[[nodiscard]] Backend* control_backend(const frontend::BackendCatalog& catalog,
                                       const environment::Selection& selection,
                                       std::unique_ptr<frontend::BackendCatalog>& own);

}  // namespace cordon::cli
