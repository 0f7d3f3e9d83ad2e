#include "signal_cancel.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>

namespace cordon::cli {
namespace {

constexpr std::array kCancelSignals = {SIGINT, SIGTERM, SIGHUP};
constexpr unsigned char kStopByte = 0;  // not a signal number: tells the watcher to end

// Written by the constructor before the handlers are installed, read by the handler.
std::atomic<int> g_signal_pipe{-1};
std::array<struct sigaction, kCancelSignals.size()> g_previous{};

extern "C" void on_cancel_signal(int signal) {
  const int saved_errno = errno;  // the interrupted code may be inspecting errno
  const auto byte = static_cast<unsigned char>(signal);
  const int fd = g_signal_pipe.load();
  // A full pipe means a cancel is already pending; dropping the byte loses nothing.
  if (fd >= 0) (void)!::write(fd, &byte, 1);
  errno = saved_errno;
}

extern "C" void on_sigpipe(int /*signal*/) {}

}  // namespace

SignalCanceller::SignalCanceller(CancelSource source) : source_(std::move(source)) {
  std::array<int, 2> fds{};
  // Non-blocking write end: the handler must never block inside a signal.
  if (::pipe2(fds.data(), O_CLOEXEC) == 0) {
    read_end_.reset(fds[0]);
    write_end_.reset(fds[1]);
    ::fcntl(write_end_.get(), F_SETFL, O_NONBLOCK);
  }
  if (!write_end_) return;  // no pipe, no cancellation by signal; the run still works
  g_signal_pipe.store(write_end_.get());
  watcher_ = std::thread([this] { watch(); });

  struct sigaction action{};
  action.sa_handler = on_cancel_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < kCancelSignals.size(); ++i) {
    ::sigaction(kCancelSignals[i], &action, &g_previous[i]);
  }
}

SignalCanceller::~SignalCanceller() {
  if (!write_end_) return;
  for (std::size_t i = 0; i < kCancelSignals.size(); ++i) {
    ::sigaction(kCancelSignals[i], &g_previous[i], nullptr);
  }
  g_signal_pipe.store(-1);
  // Blocking is fine here: a full pipe still lets the watcher read and see the stop.
  ::fcntl(write_end_.get(), F_SETFL, 0);
  (void)!::write(write_end_.get(), &kStopByte, 1);
  watcher_.join();
}

void SignalCanceller::watch() {
  for (;;) {
    unsigned char byte = kStopByte;
    const ssize_t n = ::read(read_end_.get(), &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kStopByte) return;
    int expected = 0;
    received_.compare_exchange_strong(expected, byte);  // the first signal names the exit
    source_.cancel();
  }
}

void catch_sigpipe() {
  struct sigaction action{};
  action.sa_handler = on_sigpipe;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGPIPE, &action, nullptr);
}

}  // namespace cordon::cli
