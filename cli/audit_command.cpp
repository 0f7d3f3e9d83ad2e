#include "audit_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "audit/runner.h"
#include "cli_error.h"
#include "environment_command.h"
#include "frontend/backend_catalog.h"
#include "frontend_names.h"
#include "request_builder.h"

namespace cordon::cli {
namespace {

using audit::AttemptStatus;
using audit::AttemptVerdict;
using audit::AuditReport;

std::vector<std::string> split_ids(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string id; std::getline(in, id, ',');) {
    if (!id.empty()) out.push_back(id);
  }
  return out;
}

// The backends to audit, in the catalog's order; fails with a message for the user.
Result<std::vector<std::string>> backends_to_audit(const BackendCatalog& catalog,
                                                   const AuditCommandOptions& options,
                                                   bool allow_list) {
  // With --allow-net, only the backends that carry a list: the others are not audited with
  // it (`--all`) or are refused by name, as `cordon run` refuses them.
  const std::vector<BackendCandidate> candidates =
      allow_list ? for_allow_list(catalog.candidates()) : catalog.candidates();
  if (options.all) {
    std::vector<std::string> out;
    for (const BackendCandidate& c : candidates) {
      if (c.available) out.push_back(c.name);
    }
    if (out.empty()) return fail(ErrorCode::kUnavailable, "no backend is available here");
    return out;
  }
  const std::string requested =
      options.backend.empty() ? std::string(kAutoBackend) : options.backend;
  Result<BackendChoice> choice = choose_backend(candidates, requested, /*allow_unisolated=*/false);
  if (!choice) return std::unexpected(choice.error());
  return std::vector<std::string>{choice->name};
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string cell(const AttemptVerdict& v) {
  std::string s(audit::to_string(v.status));
  // A "!" marks an escape the backend claims to stop: the ones that fail the audit.
  if (v.contradicts_claim()) s += "!";
  return s;
}

void print_progress(const AttemptVerdict& v) {
  std::fprintf(stderr, "  %-26s %s\n", v.id.c_str(), cell(v).c_str());
}

}  // namespace

std::string render_audit_matrix(const std::vector<AuditReport>& reports) {
  if (reports.empty()) return "";
  std::ostringstream out;
  const bool single = reports.size() == 1;
  out << pad("ATTEMPT", 26) << pad("CLASS", 12) << pad("ASPECT", 15);
  for (const AuditReport& r : reports) out << pad(single ? "CLAIM" : r.binding.backend_name, 10);
  out << (single ? pad("RESULT", 10) + "EVIDENCE" : std::string()) << "\n";
  for (const AttemptVerdict& first : reports.front().verdicts) {
    out << pad(first.id, 26) << pad(first.threat_class, 12)
        << pad(std::string(to_string(first.aspect)), 15);
    for (const AuditReport& r : reports) {
      const AttemptVerdict* v = r.find(first.id);
      if (single) {
        out << pad(std::string(to_string(v->claimed)), 10) << pad(cell(*v), 10) << v->evidence;
      } else {
        out << pad(v != nullptr ? cell(*v) : "-", 10);
      }
    }
    out << "\n";
  }
  for (const AuditReport& r : reports) {
    int counts[4] = {0, 0, 0, 0};
    for (const AttemptVerdict& v : r.verdicts) ++counts[static_cast<int>(v.status)];
    out << "\n"
        << r.binding.backend_name << " " << r.binding.backend_version << ": " << counts[0]
        << " blocked, " << counts[1] << " escaped, " << counts[2] << " error, " << counts[3]
        << " skipped";
    if (!single) {
      for (const AttemptVerdict& v : r.verdicts) {
        if (v.status == AttemptStatus::kEscaped || v.status == AttemptStatus::kError) {
          out << "\n  " << pad(v.id, 26) << cell(v) << " " << v.evidence;
        }
      }
    }
    const int status = audit::audit_exit_status(r.verdicts);
    out << (status == 1 ? "\n  FAIL: an attempt escaped what the backend claims to stop (marked !)"
            : status == 2 ? "\n  FAIL: an attempt on a claimed aspect could not be judged"
                          : "")
        << "\n";
  }
  out << "\nBLOCKED/ESCAPED are judged from the host (listeners, canaries, process table, disk)"
         " where it can see the effect.\n";
  return out.str();
}

int audit_command(const AuditCommandOptions& options) {
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  if (!catalogue) return report_failure(catalogue.error().describe(), options.json);
  BackendOptions backend_options = options.backend_options;
  Result<environment::Selection> env = apply_environment(options.environment, backend_options);
  if (!env) return report_failure(env.error().describe(), options.json);
  const BackendCatalog catalog({}, {}, backend_options, BackendCatalog::Variants::kList);
  if (Status refused = catalog.options_status(); !refused) {
    return report_failure(refused.error().message, options.json);
  }
  Result<NetworkAccess> network = network_from(options.network);
  if (!network) return report_failure(network.error().message, options.json);
  Result<std::vector<std::string>> names = backends_to_audit(catalog, options, network->any());
  if (!names) return report_failure(names.error().message, options.json);

  audit::AuditOptions run_options;
  run_options.only = split_ids(options.only);
  run_options.network = *network;
  std::unique_ptr<BackendCatalog> controls;
  if (Backend* sub = control_backend(catalog, *env, controls);
      sub != nullptr && sub->probe().available) {
    (void)sub->prepare();  // a failure shows in the control runs' results
    run_options.control_backend = sub;
  }
  if (!options.json) run_options.progress = print_progress;

  std::vector<AuditReport> reports;
  int status = 0;
  for (const std::string& name : *names) {
    Backend* backend = catalog.backend(name);
    if (backend == nullptr) return report_failure("backend vanished: " + name, options.json);
    if (!options.json) std::fprintf(stderr, "cordon: auditing %s\n", name.c_str());
    (void)backend->prepare();  // a failure shows as each attempt's sandbox error
    AuditReport report =
        audit::start_report(*backend, *catalogue, /*complete=*/run_options.only.empty(), *network);
    Result<std::vector<AttemptVerdict>> verdicts =
        audit::run_attempts(*backend, *catalogue, run_options);
    if (!verdicts) return report_failure(verdicts.error().describe(), options.json);
    report.verdicts = std::move(*verdicts);
    if (report.complete && !options.no_store) {
      if (auto stored = audit::store_report(report); !stored) {
        std::fprintf(stderr, "cordon: report not stored: %s\n", stored.error().describe().c_str());
      }
    }
    const int s = audit::audit_exit_status(report.verdicts);
    if (s == 1 || status == 0) status = s;
    reports.push_back(std::move(report));
  }

  if (options.json) {
    nlohmann::json out = {{"exit_status", status}, {"reports", nlohmann::json::array()}};
    for (const AuditReport& r : reports) out["reports"].push_back(audit::to_json(r));
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::fputs(render_audit_matrix(reports).c_str(), stdout);
    if (!reports.empty() && run_options.only.empty() && !options.no_store) {
      std::printf("reports: %s\n", audit::report_dir().c_str());
    }
  }
  std::fflush(stdout);
  return status;
}

}  // namespace cordon::cli
