#include "session_protocol.h"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <utility>

namespace cordon::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kHeaderBytes = 4;

// Waits for `events` on `fd` until `until`; kTimeout past it.
Status wait_for(int fd, short events, Clock::time_point until) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    const int ready = ::poll(&pfd, 1, poll_ms_until(until));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return fail_errno("poll the session socket");
    if (ready == 0) return fail(ErrorCode::kTimeout, "the session did not answer in time");
    return {};
  }
}

}  // namespace

int poll_ms_until(Clock::time_point until) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<std::int64_t>(left, 1 << 30));
}

std::string encode_frame(const json& message) {
  const std::string body =
      message.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string out;
  out.reserve(kHeaderBytes + body.size());
  for (std::size_t i = 0; i < kHeaderBytes; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += body;
  return out;
}

Result<std::optional<json>> FrameReader::feed(std::string_view bytes, std::size_t* used) {
  std::size_t at = 0;
  while (!length_ && at < bytes.size()) {
    header_.push_back(bytes[at++]);
    if (header_.size() == kHeaderBytes) {
      std::uint32_t n = 0;
      for (std::size_t i = 0; i < kHeaderBytes; ++i) {
        n |= static_cast<std::uint32_t>(static_cast<unsigned char>(header_[i])) << (8 * i);
      }
      if (n > max_) {
        *used = at;
        return fail(ErrorCode::kInvalidArgument,
                    "a session message of " + std::to_string(n) + " bytes is over the bound");
      }
      length_ = n;
      body_.reserve(n);
    }
  }
  if (length_) {
    const std::size_t take = std::min<std::size_t>(*length_ - body_.size(), bytes.size() - at);
    body_.append(bytes.substr(at, take));
    at += take;
  }
  *used = at;
  if (!length_ || body_.size() < *length_) return std::optional<json>();
  json parsed = json::parse(body_, nullptr, /*allow_exceptions=*/false);
  header_.clear();
  body_.clear();
  length_.reset();
  if (parsed.is_discarded())
    return fail(ErrorCode::kInvalidArgument, "a session message is not JSON");
  return std::optional<json>(std::move(parsed));
}

Result<json> read_frame(int fd, Clock::time_point until, std::uint32_t max_bytes) {
  FrameReader reader(max_bytes);
  std::array<char, 65536> buf{};
  for (;;) {
    if (Status ready = wait_for(fd, POLLIN, until); !ready) return std::unexpected(ready.error());
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return fail_errno("read the session socket");
    if (n == 0) return fail(ErrorCode::kUnavailable, "the session's holder closed the connection");
    std::size_t used = 0;
    auto got = reader.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)), &used);
    if (!got) return std::unexpected(got.error());
    // One message per connection: bytes after it are the peer's error, ignored.
    if (*got) return std::move(**got);
  }
}

Status write_frame(int fd, const json& message, Clock::time_point until) {
  const std::string frame = encode_frame(message);
  std::size_t at = 0;
  while (at < frame.size()) {
    if (Status ready = wait_for(fd, POLLOUT, until); !ready) return ready;
    const ssize_t n = ::send(fd, frame.data() + at, frame.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return fail_errno("write the session socket");
    at += static_cast<std::size_t>(n);
  }
  return {};
}

Result<HolderOp> holder_op(const json& request) {
  static constexpr std::array<std::pair<std::string_view, HolderOp>, 8> kOps = {{
      {"run", HolderOp::kRun},
      {"info", HolderOp::kInfo},
      {"reset", HolderOp::kReset},
      {"stats", HolderOp::kStats},
      {"list", HolderOp::kList},
      {"read", HolderOp::kRead},
      {"write", HolderOp::kWrite},
      {"stop", HolderOp::kStop},
  }};
  const auto op = request.is_object() ? request.find("op") : request.end();
  if (op == request.end() || !op->is_string()) {
    return fail(ErrorCode::kInvalidArgument, "a session request has a string 'op'");
  }
  for (const auto& [name, value] : kOps) {
    if (*op == name) return value;
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown session request '" + op->get<std::string>() + "'");
}

}  // namespace cordon::cli
