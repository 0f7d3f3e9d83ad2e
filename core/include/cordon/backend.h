// The interface every backend implements. Backends are plugins (plugin_abi.h).
#pragma once

#include <string>
#include <string_view>

#include "cordon/cancel.h"
#include "cordon/capabilities.h"
#include "cordon/observer.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon {

struct Probe {
  bool available = false;
  std::string reason;  // why not, in words a user can act on; may explain caveats if available
};

class Backend {
 public:
  virtual ~Backend() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view version() const = 0;

  // Whether this backend can run on this host, and why not. Cheap, no side effects.
  [[nodiscard]] virtual Probe probe() const = 0;

  // What a run with these limits would have enforced on this host, per aspect.
  [[nodiscard]] virtual Capabilities capabilities(const Limits& limits) const = 0;

  // Runs the request to completion. Never throws and never returns an API error for
  // the run itself: a sandbox failure is a RunResult with outcome kSandboxError.
  // Several runs may proceed at once on different threads of one process.
  // `observer` may be null.
  [[nodiscard]] virtual RunResult run(const RunRequest& request, const CancelToken& cancel,
                                      RunObserver* observer) = 0;
};

}  // namespace cordon
