// Cancellation from another thread. A CancelSource owns the state; CancelTokens are
// cheap copies handed to run(). The token exposes an eventfd so a backend's poll loop
// wakes the moment cancel() is called, without polling a flag.
#pragma once

#include <memory>

namespace cordon {

class CancelToken;

class CancelSource {
 public:
  // Throws std::system_error when no eventfd can be had (fd exhaustion): degrading to
  // a token that cannot wake a poll loop would be worse.
  CancelSource();
  void cancel();  // thread-safe, idempotent
  [[nodiscard]] bool cancelled() const;
  [[nodiscard]] CancelToken token() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  friend class CancelToken;
};

class CancelToken {
 public:
  CancelToken() = default;  // a token that is never cancelled
  [[nodiscard]] bool cancelled() const;
  // An fd that becomes readable once cancelled (-1 for a never-cancelled token). Poll it,
  // never read it: reading would reset it for every other waiter.
  [[nodiscard]] int wait_fd() const;
  // A token that follows an fd someone else owns and writes once to cancel: a plugin's
  // view of its caller's CancelSource (plugin_abi.h's cancel_fd). The fd must outlive
  // every copy of the token; it is polled, never read or closed. -1: never cancelled.
  [[nodiscard]] static CancelToken following(int fd);

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<CancelSource::State> state) : state_(std::move(state)) {}
  std::shared_ptr<CancelSource::State> state_;
};

}  // namespace cordon
