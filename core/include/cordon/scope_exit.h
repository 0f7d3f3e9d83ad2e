// Runs a callable when the scope ends, for the cleanups that have no RAII type of their
// own. Prefer a real owner type (UniqueFd, TempDir, ChildProcess) where one exists.
#pragma once

#include <utility>

namespace cordon {

template <typename F>
class [[nodiscard]] ScopeExit {
 public:
  explicit ScopeExit(F fn) : fn_(std::move(fn)) {}
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;
  ~ScopeExit() {
    if (armed_) fn_();
  }
  void dismiss() { armed_ = false; }

 private:
  F fn_;
  bool armed_ = true;
};

}  // namespace cordon
