// An audit report: the verdicts of one backend on one host, bound to what they prove
// something about — the host (fingerprint), the backend's version, its policy (a hash of
// what capabilities() claims) and the catalogue. A report whose binding does not match
// the present is not used: a changed kernel, backend or policy needs a new audit.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/catalogue.h"
#include "audit/interpreters.h"
#include "audit/verdict.h"
#include "cordon/backend.h"

namespace cordon::audit {

// 2: "interpreters" (measured inside the sandbox). A report of another schema is not
// used: `cordon prompt` audits again.
inline constexpr int kReportSchemaVersion = 2;

struct ReportBinding {
  std::string host_fingerprint;  // "sha256:..."
  std::string backend_name;      // as lists show it: "container (runsc)" (backend_label())
  std::string backend_version;
  std::string policy_hash;  // "sha256:..."
  std::string catalogue_hash;
  // The network allow-list every attempt without a list of its own ran under
  // (network_binding()); "" for none. A report made without a list never backs a
  // description that states one, nor one made with another list.
  std::string network{};  // NOLINT(readability-redundant-member-init): as below
  bool operator==(const ReportBinding&) const = default;
};

struct AuditReport {
  ReportBinding binding;
  std::string host_summary;  // "Linux 6.1.0 x86_64, uid 0" for people
  std::string created_at;    // UTC, ISO 8601
  bool complete = false;     // every attempt of the catalogue ran (no --only)
  std::vector<AttemptVerdict> verdicts;
  // Measured inside the sandbox by a complete audit (interpreters.h); the {} for g++'s
  // -Wmissing-field-initializers on designated initialisers that leave it out.
  std::vector<InterpreterVersion> interpreters{};  // NOLINT(readability-redundant-member-init)

  [[nodiscard]] const AttemptVerdict* find(std::string_view id) const;
};

// Identifies this host as far as isolation goes: kernel release and version, machine,
// machine-id (else hostname), euid, cgroup layout and the sysctls that change what the
// kernel allows unprivileged code.
[[nodiscard]] std::string host_fingerprint();
[[nodiscard]] std::string host_summary();
// Hash of what `backend` claims, for its default limits and every limit set the
// catalogue uses, over the claims' data (claims.h claim_data()): a change in any claim
// (mechanism, value, seccomp policy hash, condition, range) changes it; rewording the
// sentences rendered from them does not.
// With an allow-list (`network`, as network_binding() writes it) the hash covers it too.
// It also covers the interpreter table's languages: a report's measured interpreters are
// those of the table it was made with.
[[nodiscard]] std::string policy_hash(const Backend& backend, const Catalogue& catalogue,
                                      std::string_view network = "");
[[nodiscard]] ReportBinding binding_for(const Backend& backend, const Catalogue& catalogue,
                                        const NetworkAccess& network = {});
// The allow-list as a report binds it: its entries lower-cased, sorted and without
// repeats, and its limits, as compact JSON ("" without a list): the same list written in
// another order binds the same report.
[[nodiscard]] std::string network_binding(const NetworkAccess& network);
// A report for an audit of `backend` about to run (its verdicts still to come): binding,
// host, time, and, for a complete audit, the interpreters measured in the sandbox. What
// `cordon audit`, `cordon prompt` and the inspector each start from.
[[nodiscard]] AuditReport start_report(Backend& backend, const Catalogue& catalogue, bool complete,
                                       const NetworkAccess& network = {});

[[nodiscard]] nlohmann::json to_json(const AttemptVerdict& verdict);
[[nodiscard]] nlohmann::json to_json(const AuditReport& report);
[[nodiscard]] Result<AuditReport> report_from_json(const nlohmann::json& j);

// Exit status of `cordon audit` for these verdicts: 1 when an attempt escaped a backend
// claiming to stop it, else 2 when an attempt on a claimed aspect could not be judged,
// else 0.
[[nodiscard]] int audit_exit_status(const std::vector<AttemptVerdict>& verdicts);

// Whether `report` backs sessions on its backend (issue #41): "" when it holds the
// cross-session attempts and every one of them is BLOCKED; else why not, in words. A server
// offers sessions only where this is "".
[[nodiscard]] std::string sessions_unbacked(const AuditReport& report);

// Where reports are kept: $CORDON_AUDIT_DIR, else $XDG_STATE_HOME/cordon/audit, else
// ~/.local/state/cordon/audit.
[[nodiscard]] std::filesystem::path report_dir();
[[nodiscard]] std::filesystem::path report_path(const ReportBinding& binding);
[[nodiscard]] Status store_report(const AuditReport& report);
// The stored complete report with exactly this binding, if any.
[[nodiscard]] std::optional<AuditReport> load_report(const ReportBinding& binding);

}  // namespace cordon::audit

namespace cordon::audit {
// Now, UTC, ISO 8601 to the second: "2026-11-29T10:00:00Z".
[[nodiscard]] std::string utc_now();
}  // namespace cordon::audit
