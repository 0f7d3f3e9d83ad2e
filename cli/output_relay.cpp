#include "output_relay.h"

#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace cordon::cli {
namespace {

// Best effort: a reader that went away (EPIPE) must not stop the run or its report.
void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

OutputRelay::OutputRelay(int stdout_fd, int stderr_fd)
    : stdout_fd_(stdout_fd), stderr_fd_(stderr_fd), writer_([this] { drain(); }) {}

OutputRelay::~OutputRelay() { stop(); }

void OutputRelay::on_output(Stream stream, std::string_view chunk, bool kept) {
  if (!kept || chunk.empty()) return;
  (stream == Stream::kStdout ? streamed_stdout_ : streamed_stderr_) += chunk.size();
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(Chunk{stream, std::string(chunk)});
  }
  wake_.notify_one();
}

void OutputRelay::finish(const RunResult& result) {
  const auto rest = [](const std::string& data, std::uint64_t streamed) {
    return streamed < data.size() ? std::string_view(data).substr(streamed) : std::string_view();
  };
  on_output(Stream::kStdout, rest(result.stdout_data, streamed_stdout_), /*kept=*/true);
  on_output(Stream::kStderr, rest(result.stderr_data, streamed_stderr_), /*kept=*/true);
  stop();
}

void OutputRelay::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void OutputRelay::drain() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and nothing left
    Chunk chunk = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    write_all(chunk.stream == Stream::kStdout ? stdout_fd_ : stderr_fd_, chunk.bytes);
    lock.lock();
  }
}

}  // namespace cordon::cli
