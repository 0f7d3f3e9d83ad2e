#include "cordon/cancel.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <system_error>

#include "cordon/unique_fd.h"

namespace cordon {

// The flag answers cancelled() without a syscall; the eventfd wakes poll loops. Nobody
// ever reads the eventfd, so once written it stays readable for every waiter.
// A followed fd (CancelToken::following) is another's: `borrowed` holds it, `event` none,
// and cancelled() asks the fd itself, since nobody here sets the flag.
struct CancelSource::State {
  UniqueFd event;
  int borrowed = -1;
  std::atomic<bool> cancelled{false};
};

CancelSource::CancelSource() : state_(std::make_shared<State>()) {
  // A constructor cannot return a Result; running out of fds here is the one failure
  // and silently degrading to "cannot be cancelled" would be worse than throwing.
  state_->event.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state_->event) {
    throw std::system_error(errno, std::generic_category(), "eventfd for CancelSource");
  }
}

void CancelSource::cancel() {
  // exchange() makes the write happen once, however many threads cancel at once.
  if (state_->cancelled.exchange(true, std::memory_order_acq_rel)) return;
  const std::uint64_t one = 1;
  // Cannot fail in a way that matters: the counter is far from overflow and EINTR does
  // not apply to a non-blocking eventfd write.
  [[maybe_unused]] const ssize_t n = ::write(state_->event.get(), &one, sizeof one);
}

bool CancelSource::cancelled() const { return state_->cancelled.load(std::memory_order_acquire); }

CancelToken CancelSource::token() const { return CancelToken(state_); }

bool CancelToken::cancelled() const {
  if (!state_) return false;
  if (state_->cancelled.load(std::memory_order_acquire)) return true;
  if (state_->borrowed < 0) return false;
  pollfd p{state_->borrowed, POLLIN, 0};
  if (::poll(&p, 1, /*timeout=*/0) != 1) return false;
  // Readable stays readable (nobody reads it): remember it and skip the syscall next time.
  state_->cancelled.store(true, std::memory_order_release);
  return true;
}

int CancelToken::wait_fd() const {
  if (!state_) return -1;
  return state_->borrowed >= 0 ? state_->borrowed : state_->event.get();
}

CancelToken CancelToken::following(int fd) {
  if (fd < 0) return {};
  auto state = std::make_shared<CancelSource::State>();
  state->borrowed = fd;
  return CancelToken(std::move(state));
}

}  // namespace cordon
