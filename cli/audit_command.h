// `cordon audit`: runs the escape catalogue (audit/) against backends, prints the
// matrix, stores complete reports for `cordon prompt`, and fails when an attempt escapes
// a backend whose capabilities() claim to stop it.
#pragma once

#include <string>
#include <vector>

#include "audit/report.h"
#include "cordon/backend_options.h"
#include "run_options.h"

namespace cordon::cli {

struct AuditCommandOptions {
  std::string backend;  // empty: the most isolating available (as `--backend auto`)
  bool all = false;     // every available backend, side by side
  bool json = false;
  std::string only;  // "ID,ID": these attempts only (the report is then not stored)
  bool no_store = false;
  BackendOptions backend_options;  // --pool-size, --engine, --image, --runtime
  EnvironmentFlags environment;    // --environment, --rootfs: the audited backend's root
  // --allow-net ...: every attempt without a list of its own runs under it, and the stored
  // report is bound to it (what `cordon prompt --allow-net` with the same list uses).
  NetworkFlags network;
};

[[nodiscard]] int audit_command(const AuditCommandOptions& options);

// The matrix as text: one row per attempt, one status column per report.
[[nodiscard]] std::string render_audit_matrix(const std::vector<audit::AuditReport>& reports);

}  // namespace cordon::cli
