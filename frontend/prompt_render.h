// A backend's run_code tool description, rendered under its audit gate: only what the
// stored audit report for this backend, host and policy proves is stated (auditing first
// when there is no such report and the caller allows it). What `cordon prompt` prints,
// `cordon mcp` serves and the inspector's Tool description tab shows.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/report.h"
#include "cordon/backend.h"
#include "cordon/backend_options.h"
#include "cordon/cancel.h"
#include "cordon/error.h"
#include "cordon/request.h"
#include "prompts/tool_render.h"

namespace cordon::frontend {

// What a caller waiting on an audit hears of it (`cordon mcp`'s first start, issue #40):
// after each attempt, how many of how many have run; and a token that stops the audit
// between attempts.
struct AuditWatch {
  std::function<void(const audit::AttemptVerdict&, std::size_t done, std::size_t total)> progress;
  CancelToken cancel;
};

// What `cordon prompt` and `cordon mcp` are asked to render.
struct PromptOptions {
  std::string backend = "auto";
  std::optional<std::string> timeout;    // DUR
  std::optional<std::string> memory;     // SIZE
  std::optional<std::string> processes;  // N
  std::optional<int> version;            // the template version; latest when unset
  std::string id = "run_code";
  std::string format = "text";
  bool unverified = false;         // render unproven claims marked "[unverified]"
  bool no_audit = false;           // never run an audit: without a report, claims are unproven
  BackendOptions backend_options;  // --pool-size, --engine, --image, --runtime
  // The environment's sentence (environment::describe()), stated after the interpreters.
  std::string software{};    // NOLINT(readability-redundant-member-init)
  AuditWatch audit_watch{};  // NOLINT(readability-redundant-member-init): the audit, if one runs
  // The sessions the server offers (issue #41; `cordon mcp`, `cordon prompt --sessions`):
  // run_code's `session` argument and the session tools' sentences. Unset: none.
  std::optional<prompts::SessionFacts> sessions{};  // NOLINT(readability-redundant-member-init)
  // `cordon prompt --sessions`: render as `cordon mcp` serves where the backend holds
  // sessions (a trial session decides; `sessions` gets its defaults).
  bool with_sessions = false;
};

// The languages `backend` can run here, in the interpreter table's order: those whose run it
// can plan (describe_plan() finds the interpreter under the sandbox's root); for a plan that
// names no command, those whose interpreter the host has (such a backend runs the code on
// the host). What the description offers, and what `cordon backends` and `plan` list.
[[nodiscard]] std::vector<Language> available_languages(const Backend& backend);

// The stored audit report bound to this backend, host, policy and allow-list (`network`;
// none by default), if any (never audits).
[[nodiscard]] std::optional<audit::AuditReport> stored_report(const Backend& backend,
                                                              const NetworkAccess& network = {});

// The stored complete report bound to this backend, host, policy and allow-list; without
// one, and with `may_audit`, the audit runs (controls through `control`, may be null; every
// attempt without a list of its own under `network`) and its report is stored. Empty
// without a report and `may_audit`.
[[nodiscard]] Result<std::optional<audit::AuditReport>> matching_report(
    Backend& backend, Backend* control, bool may_audit, const NetworkAccess& network = {},
    const AuditWatch& watch = {});

// `tool` rendered for `backend` (named `backend_name`) with these limits and timeout,
// stating only what `report` proves (null: nothing), in `format` (prompts::kToolFormats).
// What `cordon prompt` prints and the inspector's Tool description tab shows.
struct PromptRender {
  const prompts::ToolTemplate* tool = nullptr;
  const Backend* backend = nullptr;
  std::string backend_name;
  Limits limits;
  std::chrono::milliseconds timeout{kDefaultTimeout};
  const audit::AuditReport* report = nullptr;
  bool unverified = false;
  // The allow-list the description states; none by default. {}: as RenderContext's.
  NetworkAccess network{};  // NOLINT(readability-redundant-member-init)
  std::string software{};   // NOLINT(readability-redundant-member-init): as RenderContext's
  std::optional<prompts::SessionFacts> sessions{};  // NOLINT(readability-redundant-member-init)
};
[[nodiscard]] Result<std::string> render_prompt(const PromptRender& input, std::string_view format);
// What render_prompt() renders `input.tool` with (the backend's capabilities for the
// limits, the languages this host has).
[[nodiscard]] prompts::RenderContext render_context(const PromptRender& input);

// What `cordon prompt` prints for `backend` (named `backend_name`) with these limits,
// timeout and allow-list, under its audit gate (options.no_audit, options.unverified), in
// options.format, of template options.id@options.version. `cordon mcp` serves the same
// text as its tool.
[[nodiscard]] Result<std::string> render_for_backend(Backend& backend,
                                                     const std::string& backend_name,
                                                     Backend* control, const Limits& limits,
                                                     std::chrono::milliseconds timeout,
                                                     const PromptOptions& options,
                                                     const NetworkAccess& network = {});

// "run_code@1" -> {run_code, 1}, checked against the built-in templates: a result never
// records a description that does not exist.
[[nodiscard]] Result<ToolDescriptionRef> parse_tool_description_ref(std::string_view text);

}  // namespace cordon::frontend
