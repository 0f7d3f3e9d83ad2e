// serve_stdio: one reader thread (the caller's) feeding stdin's lines to one Session, and a
// mutex-protected writer putting each outgoing message on stdout as one line.
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <string>

#include "mcp/jsonrpc.h"
#include "mcp/line_reader.h"
#include "mcp/session.h"
#include "mcp/transports.h"

namespace cordon::cli::mcp {
namespace {

class FdSink final : public Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}

  bool send(const nlohmann::json& message) override {
    // Invalid UTF-8 from the code's output is replaced, never a throw on a worker.
    std::string line = message.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                                    nlohmann::json::error_handler_t::replace);
    line += '\n';
    const std::lock_guard lock(mutex_);
    if (gone_) return false;
    std::string_view rest = line;
    while (!rest.empty()) {
      const ssize_t n = ::write(fd_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // EPIPE (SIGPIPE is caught): the client is gone
        gone_ = true;
        return false;
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  const int fd_;
  std::mutex mutex_;
  bool gone_ = false;
};

bool blank(std::string_view text) {
  return text.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

int serve_stdio(Service& service, const CancelToken& stop, std::size_t max_line_bytes) {
  const auto sink = std::make_shared<FdSink>(STDOUT_FILENO);
  Session session(service, "stdio");
  LineReader reader(max_line_bytes);
  const auto on_line = [&](const LineReader::Line& line) {
    if (line.too_long) {
      std::fprintf(stderr, "cordon: mcp: skipped a line longer than %zu bytes\n", max_line_bytes);
      (void)sink->send(jsonrpc::error_response(
          nullptr, jsonrpc::kParseError,
          "Parse error: message longer than " + std::to_string(max_line_bytes) + " bytes"));
      return;
    }
    if (!blank(line.text)) (void)session.handle(line.text, sink);
  };
  std::array<char, 65536> buffer{};
  for (;;) {
    std::array<pollfd, 2> fds{pollfd{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0},
                              pollfd{.fd = stop.wait_fd(), .events = POLLIN, .revents = 0}};
    const int ready = ::poll(fds.data(), stop.wait_fd() >= 0 ? 2 : 1, /*timeout=*/-1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || stop.cancelled()) break;
    const ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {  // end of input: the client is gone (or closed its side)
      on_line(reader.finish());
      break;
    }
    reader.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), on_line);
  }
  // Every call still queued or running is cancelled and waited for; none is answered.
  session.cancel_all();
  return 0;
}

}  // namespace cordon::cli::mcp
