// Fills a tool-description template from a backend's capabilities and effective limits,
// stating only what the matching audit report proves.
//
// Every sentence about isolation or limits is a placeholder, rendered by the code here and
// backed by the audit attempts on its aspects (Statement::attempts). A sentence that says
// something is stopped (no network, no host files, a memory limit, "each call starts from
// scratch", ...) is a claim: it is rendered when every audit attempt on its aspects was
// BLOCKED; refused with an error naming the attempt when one ESCAPED; and, when unproven
// (no report, attempts skipped or unjudged), refused — or, with `unverified`, rendered
// marked "[unverified]". A sentence that says something is NOT stopped needs no proof: a
// backend without network isolation can only say so. Facts about the interface come from
// the declarations that enforce them (the code size limit, kMaxCodeBytes) or from what
// the audit measured inside the sandbox (the interpreters' versions); nothing is said
// about third-party packages. A template's own text outside its placeholders claims
// nothing (tests/tool_claims_test.cpp holds every released version's default to that).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/report.h"
#include "cordon/capabilities.h"
#include "cordon/request.h"
#include "prompts/session_facts.h"
#include "prompts/tool_description.h"

namespace cordon::prompts {

inline constexpr std::string_view kUnverifiedMark = "[unverified] ";

struct RenderContext {
  std::string backend_name;
  Capabilities capabilities;  // for the effective limits
  std::chrono::milliseconds timeout{kDefaultTimeout};
  std::vector<Language> languages;             // available on this host
  const audit::AuditReport* report = nullptr;  // null: nothing is proven
  bool unverified = false;
  // The run's network allow-list: the network sentence names exactly what it lets the code
  // reach (and the report must be bound to it); none: the closed network. The {} for g++'s
  // -Wmissing-field-initializers on designated initialisers that leave it out.
  NetworkAccess network{};  // NOLINT(readability-redundant-member-init)
  // What the environment holds (frontend/environment.h describe()): which one, its digest,
  // its Python packages and tools, from its stored inventory. Follows the interpreters'
  // sentence; "" says nothing.
  std::string software{};  // NOLINT(readability-redundant-member-init)
  // The sessions the server offers (issue #41); unset: none. A template's session sentences
  // need them (rendering one without is an error); a schema property marked
  // "x-cordon-sessions": true (run_code's `session`) is left out without them.
  std::optional<SessionFacts> sessions{};  // NOLINT(readability-redundant-member-init)
};

// One filled placeholder of a description and what stands behind it.
struct Statement {
  enum class Kind {
    kClaim,       // something is stopped: every attempt in `attempts` was BLOCKED
    kDisclaimer,  // something is not stopped: the backend claims nothing there
    kFact,        // the interface: a declaration or a measurement, not an isolation claim
  };
  std::string placeholder;  // "network", "fresh_start", "interpreters", ...
  Kind kind = Kind::kFact;
  std::string text;  // as rendered ("[unverified] " included); "" when left out
  // The report's attempts on the aspects the sentence is about (claims and disclaimers).
  std::vector<std::string> attempts;
};

struct RenderedTool {
  std::string id;
  int version = 0;
  std::string name;
  std::string description;
  nlohmann::json input_schema;
  nlohmann::json output_schema;       // the template's, filled; null: run_code's
  nlohmann::json annotations;         // the template's; null: run_code's
  std::vector<Statement> statements;  // the placeholders the template uses, filled
  // What the backend's capabilities (for these limits) enforce, for the MCP tool's
  // annotations: openWorldHint is false only where the network is closed (enforced, and no
  // allow-list), destructiveHint true where the code can change the host's files.
  bool network_closed = false;
  bool host_files_protected = false;
};

[[nodiscard]] Result<RenderedTool> render_tool(const ToolTemplate& tool,
                                               const RenderContext& context);

// The network sentence of a run with this allow-list: the hosts it names, how the code
// reaches them (the proxy variables), what stays refused, the limits.
[[nodiscard]] std::string allow_list_sentence(const NetworkAccess& network);

// "python, bash or sh": the {{languages}} of a description.
[[nodiscard]] std::string languages_text(const std::vector<Language>& languages);

// Whether the report proves the claims on `aspect`: "" when proven, else why not.
// `contradicted` is set when an attempt escaped.
[[nodiscard]] std::string unproven_reason(const audit::AuditReport* report, Aspect aspect,
                                          bool* contradicted);

}  // namespace cordon::prompts
