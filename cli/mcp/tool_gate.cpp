#include "mcp/tool_gate.h"

#include <algorithm>
#include <utility>

namespace cordon::cli::mcp {

ToolGate::ToolGate(std::string backend_name)
    : backend_name_(std::move(backend_name)), state_(State::kAuditing) {}

ToolGate::ToolGate(nlohmann::json tool) : state_(State::kReady), tool_(std::move(tool)) {}

ToolGate::State ToolGate::state() const {
  const std::lock_guard lock(mutex_);
  return state_;
}

const nlohmann::json& ToolGate::tool() const {
  const std::lock_guard lock(mutex_);
  return tool_;  // set once, before state_ became kReady, and never again
}

std::string ToolGate::failure() const {
  const std::lock_guard lock(mutex_);
  return failure_;
}

std::string ToolGate::waiting_text() const {
  const std::lock_guard lock(mutex_);
  std::string text = "auditing this host for the " + backend_name_ +
                     " backend before its sandbox can be described";
  if (total_ > 0) {
    text += " (" + std::to_string(done_) + " of " + std::to_string(total_) + " attempts)";
  }
  return text;
}

template <typename F>
void ToolGate::tell(F&& f) {
  const std::lock_guard lock(listeners_mutex_);
  for (Listener* listener : listeners_) f(*listener);
}

void ToolGate::progress(std::size_t done, std::size_t total, const std::string& line) {
  {
    const std::lock_guard lock(mutex_);
    done_ = done;
    total_ = total;
  }
  const std::string text = waiting_text() + ": " + line;
  tell([&](Listener& l) { l.audit_progress(text); });
}

void ToolGate::settle(Result<nlohmann::json> tool) {
  {
    const std::lock_guard lock(mutex_);
    if (state_ != State::kAuditing) return;
    if (tool) {
      tool_ = std::move(*tool);
      state_ = State::kReady;
    } else {
      failure_ = tool.error().describe();
      state_ = State::kFailed;
    }
  }
  // After the state: a listener that looked before it changed has held its requests by
  // now (under its own lock, which tool_settled() takes), one that looks after sees it.
  tell([](Listener& l) { l.tool_settled(); });
  const std::lock_guard lock(listeners_mutex_);
  if (then_ && !then_called_) {
    then_called_ = true;
    then_(state());
  }
}

void ToolGate::after_settled(std::function<void(State)> then) {
  const std::lock_guard lock(listeners_mutex_);
  then_ = std::move(then);
  if (const State now = state(); now != State::kAuditing && !then_called_) {
    then_called_ = true;
    then_(now);
  }
}

void ToolGate::add(Listener* listener) {
  const std::lock_guard lock(listeners_mutex_);
  listeners_.push_back(listener);
}

void ToolGate::remove(Listener* listener) {
  const std::lock_guard lock(listeners_mutex_);
  std::erase(listeners_, listener);
}

}  // namespace cordon::cli::mcp
