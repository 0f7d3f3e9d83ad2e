// `cordon backends`: every plugin found, whether it runs here, and what it enforces.
#pragma once

#include "cordon/backend_options.h"

namespace cordon::cli {

struct BackendsOptions {
  bool json = false;
  // The declared claims of every available backend as Markdown tables, headed by the host
  // facts they depend on: the generated section of docs/THREAT_MODEL.md
  // (scripts/threat-model-claims.sh writes it, the CTest threat_model_claims checks it).
  bool markdown = false;
  // Backend options the listed backends are made with (the runsc platform only).
  BackendOptions backend_options;
};

[[nodiscard]] int backends_command(const BackendsOptions& options);

}  // namespace cordon::cli
