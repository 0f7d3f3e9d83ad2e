// What every session of one `cordon mcp` shares: the backend (created once, with its warm
// pool), the run_code tool as `cordon prompt --format mcp` renders it, the operator's
// fixed settings for every call, the call queue and its workers, and the history writer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/error.h"
#include "frontend/backend_catalog.h"
#include "frontend/history.h"
#include "frontend/session_registry.h"
#include "frontend_names.h"
#include "mcp/call_queue.h"
#include "mcp/history_writer.h"
#include "mcp/tool_gate.h"
#include "prompts/session_facts.h"
#include "run_options.h"
#include "tool_call.h"

namespace cordon::cli::mcp {

// The warm pool's size when --pool-size is not given (namespace and container): a
// long-lived server keeps sandboxes ready, unlike one `cordon run`.
inline constexpr std::size_t kDefaultPoolSize = 2;
// Calls waiting for a worker before new ones are refused (--max-queue).
inline constexpr std::size_t kDefaultMaxQueue = 64;

struct ServiceOptions {
  // -b, -t (the largest timeout a call may ask for, and the default), --memory,
  // --processes, --cpu, --output-cap, --env, --tool-description, --allow-unisolated,
  // --no-history, --max-input-size (inline files) and the backend's own options
  // (--pool-size, default kDefaultPoolSize; --engine, --image, --runtime), as `cordon run`
  // reads them.
  RunOptions run;
  bool unverified = false;                    // as `cordon prompt --unverified`
  bool no_audit = false;                      // as `cordon prompt --no-audit`
  std::optional<std::size_t> max_concurrent;  // unset: the number of CPUs
  std::size_t max_queue = kDefaultMaxQueue;
  // Where the history goes; unset: history::default_path().
  std::optional<std::filesystem::path> history_path;
  // The sandbox sessions clients may open (issue #41): --max-sessions (0: none),
  // --sandbox-idle, --sandbox-max-age.
  frontend::SessionRegistryOptions sessions;
};

class Service {
 public:
  // Chooses and creates the backend (a backend that does not isolate only with
  // --allow-unisolated), renders the tool, starts the workers and the history writer.
  // Without a stored audit report (and without --no-audit) the audit runs on a thread of
  // the service's and the tool is rendered when it ends (gate()); everything that can be
  // refused without it (the template, a list the backend cannot carry) is refused here.
  [[nodiscard]] static Result<std::unique_ptr<Service>> create(const ServiceOptions& options);
  // A service over a backend the caller owns and keeps alive (fuzzing, tests of a
  // transport): this tool and these defaults, no catalog, no history.
  [[nodiscard]] static std::unique_ptr<Service> for_backend(Backend& backend, std::string name,
                                                            nlohmann::json tool,
                                                            ToolCallDefaults defaults,
                                                            std::size_t workers, std::size_t queue);
  // The same with the tool behind `gate` (tests of a first start's audit: they settle it).
  [[nodiscard]] static std::unique_ptr<Service> for_backend(Backend& backend, std::string name,
                                                            std::unique_ptr<ToolGate> gate,
                                                            ToolCallDefaults defaults,
                                                            std::size_t workers, std::size_t queue);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // Stops the workers (sessions have cancelled their calls by then), then stores every
  // history record still queued.
  ~Service();

  // The MCP tools/list entry (name, description, inputSchema, outputSchema, annotations),
  // once the gate is ready.
  [[nodiscard]] const nlohmann::json& tool() const { return gate_->tool(); }
  [[nodiscard]] std::string tool_name() const;
  // Every tool served, run_code first, then the session tools (when sessions are offered).
  [[nodiscard]] std::vector<nlohmann::json> tools() const;

  // Sessions (issue #41): offered when the backend opened a trial session and --max-sessions
  // is above 0. Probes the backend (probe_sessions), renders the session tools and starts
  // the registry; the run_code tool must already offer `session` (its template rendered
  // with these facts). create() calls it before rendering run_code; a test's service after
  // for_backend(). Without sessions, sessions_refusal() says why.
  [[nodiscard]] Result<prompts::SessionFacts> offer_sessions(
      const frontend::SessionRegistryOptions& options);
  // The registry, or null when the server holds no sessions.
  [[nodiscard]] frontend::SessionRegistry* sessions() const {
    return withdrawn_ ? nullptr : sessions_.get();
  }
  // After a first start's audit: when its report does not back sessions
  // (audit::sessions_unbacked), drops the session tools and the registry and says why.
  // True when it did. Only before any call (they wait for the audit).
  [[nodiscard]] bool withdraw_unbacked_sessions();
  [[nodiscard]] const std::string& sessions_refusal() const {
    return withdrawn_ ? withdrawn_refusal_ : sessions_refusal_;
  }
  [[nodiscard]] const std::vector<nlohmann::json>& session_tools() const {
    static const std::vector<nlohmann::json> kNone;
    return withdrawn_ ? kNone : session_tools_;
  }
  // Whether the tool is ready, still waiting for the audit of a first start, or failed.
  [[nodiscard]] ToolGate& gate() const { return *gate_; }
  [[nodiscard]] const ToolCallDefaults& defaults() const { return defaults_; }
  [[nodiscard]] Backend& backend() const { return *backend_; }
  [[nodiscard]] const std::string& backend_name() const { return backend_name_; }
  [[nodiscard]] CallQueue& queue() { return *queue_; }

  // Hands a finished call's record to the history writer (nothing with --no-history).
  void record(history::RunRecord record);
  // Waits until every record handed over so far is stored.
  void flush_history();

 private:
  Service() = default;

  std::unique_ptr<BackendCatalog> catalog_;   // owns the backend and its plugin
  std::unique_ptr<BackendCatalog> controls_;  // the audit's control backend, in an environment
  Backend* backend_ = nullptr;
  std::string backend_name_;
  std::unique_ptr<ToolGate> gate_;
  ToolCallDefaults defaults_;
  std::unique_ptr<HistoryWriter> history_;  // null with --no-history
  std::string sessions_refusal_ = "this server holds no sessions";
  std::vector<nlohmann::json> session_tools_;
  // Set once by withdraw_unbacked_sessions() (the auditor's thread), read by any: the
  // registry and the tools stay, unused, so no reader ever sees them go.
  std::atomic<bool> withdrawn_{false};
  std::string withdrawn_refusal_;
  // After the queue in destruction order: no worker waits in it when it closes its sessions.
  std::unique_ptr<frontend::SessionRegistry> sessions_;
  // Last: its workers use everything above, so they stop first.
  std::unique_ptr<CallQueue> queue_;
  // The audit of a first start: stopped between attempts and joined first.
  CancelSource audit_stop_;
  std::thread auditor_;
};

}  // namespace cordon::cli::mcp
