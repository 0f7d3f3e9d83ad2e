#include "cordon/proc/output_pump.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "cordon/proc/pipe.h"

namespace cordon::proc {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;  // one default pipe buffer per read

struct timespec until_ts(Clock::time_point now, Clock::time_point until) {
  const auto left = std::max(Clock::duration::zero(), until - now);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  return {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

}  // namespace

OutputPump::OutputPump(UniqueFd stdout_read, UniqueFd stderr_read, UniqueFd stdin_write,
                       std::string_view stdin_data, std::uint64_t cap_bytes, RunObserver* observer)
    : fds_{std::move(stdout_read), std::move(stderr_read)},
      stdin_(std::move(stdin_write)),
      stdin_data_(stdin_data),
      cap_(cap_bytes),
      observer_(observer),
      buf_(new char[kReadChunk]) {
  for (auto& fd : fds_) {
    if (fd) (void)set_nonblocking(fd.get());
  }
  if (stdin_) (void)set_nonblocking(stdin_.get());
  if (!fds_[0]) out_.eof = true;
  if (!fds_[1]) err_.eof = true;
}

OutputPump::~OutputPump() = default;

Status OutputPump::read_some(int index) {
  StreamCapture& cap = index == 0 ? out_ : err_;
  const ssize_t n = ::read(fds_[index].get(), buf_.get(), kReadChunk);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return {};
    return fail_errno(index == 0 ? "read stdout pipe" : "read stderr pipe");
  }
  if (n == 0) {
    cap.eof = true;
    fds_[index].reset();
    return {};
  }
  const auto len = static_cast<std::size_t>(n);
  cap.total_bytes += len;
  const std::size_t room =
      cap.data.size() < cap_ ? static_cast<std::size_t>(cap_ - cap.data.size()) : 0;
  const std::size_t keep = std::min(room, len);
  cap.data.append(buf_.get(), keep);
  if (keep < len) cap.truncated = true;
  if (observer_ != nullptr) {
    const Stream stream = index == 0 ? Stream::kStdout : Stream::kStderr;
    const std::string_view chunk(buf_.get(), len);
    if (keep > 0) observer_->on_output(stream, chunk.substr(0, keep), /*kept=*/true);
    if (keep < len) observer_->on_output(stream, chunk.substr(keep), /*kept=*/false);
  }
  return {};
}

Status OutputPump::write_some() {
  if (stdin_off_ < stdin_data_.size()) {
    const ssize_t n = write_no_sigpipe(stdin_.get(), stdin_data_.data() + stdin_off_,
                                       stdin_data_.size() - stdin_off_);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return {};
      // EPIPE: the code closed its stdin or exited; what it did not read is its choice.
      if (errno != EPIPE) return fail_errno("write stdin pipe");
      stdin_off_ = stdin_data_.size();
    } else {
      stdin_off_ += static_cast<std::size_t>(n);
    }
  }
  if (stdin_off_ >= stdin_data_.size()) stdin_.reset();  // EOF for the code
  return {};
}

Result<PumpStop> OutputPump::run(int exit_fd, int cancel_fd, Clock::time_point deadline) {
  // Zero bytes of stdin: close at once so the code sees EOF immediately.
  if (stdin_ && stdin_data_.empty()) stdin_.reset();
  for (;;) {
    // Slots: 0 stdout, 1 stderr, 2 stdin, 3 exit, 4 cancel. A negative fd is skipped by poll.
    struct pollfd pfd[5] = {
        {fds_[0].get(), POLLIN, 0}, {fds_[1].get(), POLLIN, 0}, {stdin_.get(), POLLOUT, 0},
        {exit_fd, POLLIN, 0},       {cancel_fd, POLLIN, 0},
    };
    // Past the deadline the timeout is zero: one last look, so an exit that already
    // happened is still seen as an exit.
    Clock::time_point now = Clock::now();
    const struct timespec ts = until_ts(now, deadline);
    const int ready = ::ppoll(pfd, 5, &ts, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail_errno("ppoll");
    }
    now = Clock::now();
    // Output first, so what was written before the end is never lost to a race.
    for (int i = 0; i < 2; ++i) {
      if (pfd[i].revents != 0) {
        if (auto st = read_some(i); !st) return std::unexpected(st.error());
      }
    }
    if (pfd[2].revents != 0) {
      if (pfd[2].revents & (POLLERR | POLLHUP)) {
        stdin_.reset();  // the reader is gone
      } else if (auto st = write_some(); !st) {
        return std::unexpected(st.error());
      }
    }
    if (pfd[3].revents != 0) return PumpStop{StopReason::kExited, now};
    if (pfd[4].revents != 0) return PumpStop{StopReason::kCancelled, now};
    if (now >= deadline) return PumpStop{StopReason::kDeadline, now};
  }
}

Result<bool> OutputPump::drain(Clock::time_point until) {
  stdin_.reset();
  while (fds_[0] || fds_[1]) {
    struct pollfd pfd[2] = {{fds_[0].get(), POLLIN, 0}, {fds_[1].get(), POLLIN, 0}};
    const Clock::time_point now = Clock::now();
    if (now >= until) return false;
    const struct timespec ts = until_ts(now, until);
    const int ready = ::ppoll(pfd, 2, &ts, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail_errno("ppoll");
    }
    for (int i = 0; i < 2; ++i) {
      if (pfd[i].revents != 0) {
        if (auto st = read_some(i); !st) return std::unexpected(st.error());
      }
    }
  }
  return true;
}

Status OutputPump::drain_ready() {
  for (int i = 0; i < 2; ++i) {
    while (fds_[i]) {
      struct pollfd pfd{fds_[i].get(), POLLIN, 0};
      const int ready = ::poll(&pfd, 1, 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return fail_errno("poll");
      if (ready == 0) break;
      if (auto st = read_some(i); !st) return st;
    }
  }
  return {};
}

}  // namespace cordon::proc
