// The run_code tool of one `cordon mcp`, which may not be describable yet. With no stored
// audit report for this backend, host and policy, the first start audits in the background
// (issue #40): the server answers initialize and ping at once, while tools/list and
// tools/call wait for the audit (stdio) or are answered 503 with Retry-After (HTTP). A tool
// that is settled never changes again.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::cli::mcp {

class ToolGate {
 public:
  enum class State { kAuditing, kReady, kFailed };

  // Told of each audited attempt, and once when the tool is settled (ready or failed), on
  // the auditing thread. remove() waits for a call in progress, so a listener may go away
  // once it has removed itself.
  class Listener {
   public:
    virtual void audit_progress(const std::string& text) = 0;
    virtual void tool_settled() = 0;

   protected:
    Listener() = default;
    Listener(const Listener&) = default;
    Listener& operator=(const Listener&) = default;
    ~Listener() = default;
  };

  // Auditing `backend_name` (nothing run yet).
  explicit ToolGate(std::string backend_name);
  // Ready with `tool` (a stored report or --no-audit backed it: no audit).
  explicit ToolGate(nlohmann::json tool);
  ToolGate(const ToolGate&) = delete;
  ToolGate& operator=(const ToolGate&) = delete;
  ~ToolGate() = default;

  [[nodiscard]] State state() const;
  // The tool; only once ready (it never changes after).
  [[nodiscard]] const nlohmann::json& tool() const;
  // Why it cannot be described; only once failed.
  [[nodiscard]] std::string failure() const;
  // While auditing: "auditing this host for the namespace backend before its sandbox can be
  // described (5 of 27 attempts)"; a refusal's words.
  [[nodiscard]] std::string waiting_text() const;

  // After each attempt: `done` of `total` have run; `line` (the attempt and its verdict)
  // goes to the listeners with the counts.
  void progress(std::size_t done, std::size_t total, const std::string& line);
  // Settles the tool: `tool` is the rendered tool object, or why there is none.
  void settle(Result<nlohmann::json> tool);

  void add(Listener* listener);
  void remove(Listener* listener);
  // Called once settled, after every listener (at once when already settled): what the
  // owner does next, e.g. stop a server that has no tool. It must outlive the settling.
  void after_settled(std::function<void(State)> then);

 private:
  template <typename F>
  void tell(F&& f);

  const std::string backend_name_;
  mutable std::mutex mutex_;
  State state_;
  nlohmann::json tool_;
  std::string failure_;
  std::size_t done_ = 0;
  std::size_t total_ = 0;
  // Held while listeners are told (never together with mutex_), so remove() waits.
  std::mutex listeners_mutex_;
  std::vector<Listener*> listeners_;
  std::function<void(State)> then_;
  bool then_called_ = false;
};

}  // namespace cordon::cli::mcp
