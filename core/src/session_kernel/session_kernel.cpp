#include "cordon/session_kernel.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "session_kernel/embedded.h"

namespace cordon {

std::string_view kernel_source() {
  return session_kernel_detail::embedded_kernel_files().front().text;
}

std::vector<std::string> kernel_argv(const std::string& python,
                                     std::optional<std::uint64_t> host_pidns_inode) {
  std::vector<std::string> argv{python, "-P", "-c", std::string(kernel_source())};
  if (host_pidns_inode) {
    argv.emplace_back("--sweep-pidns");
    argv.push_back(std::to_string(*host_pidns_inode));
  }
  return argv;
}

std::string encode_kernel_call(const KernelCall& call, std::uint64_t nonce) {
  nlohmann::json frame{
      {"nonce", nonce}, {"language", call.language}, {"code", call.code}, {"argv", call.argv}};
  if (call.stdin_data) frame["stdin"] = *call.stdin_data;
  // Bytes that are not UTF-8 (code is text) are replaced rather than thrown on.
  const std::string body = frame.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto size = static_cast<std::uint32_t>(body.size());
  std::string out;
  out.reserve(4 + body.size());
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((size >> shift) & 0xFFU));
  out += body;
  return out;
}

KernelReplyParser::KernelReplyParser(std::uint64_t expected_nonce, std::size_t max_bytes)
    : expected_nonce_(expected_nonce), max_bytes_(max_bytes) {}

KernelReplyParser::State KernelReplyParser::fail(std::string message) {
  error_ = std::move(message);
  body_.clear();
  state_ = State::kError;
  return state_;
}

std::size_t KernelReplyParser::wanted() const {
  if (state_ != State::kNeedMore) return 0;
  if (!length_) return 4 - header_.size();
  return *length_ - body_.size();
}

KernelReplyParser::State KernelReplyParser::feed(std::string_view bytes) {
  while (state_ == State::kNeedMore && !bytes.empty()) {
    const std::size_t take = std::min(wanted(), bytes.size());
    if (!length_) {
      header_.append(bytes.substr(0, take));
      if (header_.size() == 4) {
        std::size_t size = 0;
        for (int i = 3; i >= 0; --i) {
          size = (size << 8U) | static_cast<unsigned char>(header_[static_cast<std::size_t>(i)]);
        }
        if (size > max_bytes_) {
          return fail("the kernel announced a " + std::to_string(size) +
                      "-byte reply, over the bound of " + std::to_string(max_bytes_));
        }
        length_ = size;
        body_.reserve(size);
      }
    } else {
      body_.append(bytes.substr(0, take));
    }
    bytes.remove_prefix(take);
    if (length_ && body_.size() == *length_) finish();
  }
  if (state_ == State::kDone && !bytes.empty()) {
    return fail("the kernel sent bytes after its reply");
  }
  return state_;
}

namespace {

// An integer member within [lo, hi], or nothing (absent or null); false when malformed.
bool small_int(const nlohmann::json& frame, const char* key, int lo, int hi,
               std::optional<int>& out) {
  const auto it = frame.find(key);
  if (it == frame.end() || it->is_null()) return true;
  if (!it->is_number_integer()) return false;
  const auto v = it->get<std::int64_t>();
  if (v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

bool bounded_text(const nlohmann::json& frame, const char* key, std::size_t max,
                  std::optional<std::string>& out) {
  const auto it = frame.find(key);
  if (it == frame.end() || it->is_null()) return true;
  if (!it->is_string() || it->get_ref<const std::string&>().size() > max) return false;
  out = it->get<std::string>();
  return true;
}

}  // namespace

KernelReplyParser::State KernelReplyParser::finish() {
  const nlohmann::json frame = nlohmann::json::parse(body_, nullptr, /*allow_exceptions=*/false);
  body_.clear();
  body_.shrink_to_fit();
  if (!frame.is_object()) return fail("the kernel's reply is not a JSON object");
  const auto nonce = frame.find("nonce");
  if (nonce == frame.end() || !nonce->is_number_unsigned() ||
      nonce->get<std::uint64_t>() != expected_nonce_) {
    return fail("the kernel's reply is not for this call (nonce)");
  }
  reply_.nonce = expected_nonce_;
  if (!small_int(frame, "exit_code", 0, 255, reply_.exit_code) ||
      !small_int(frame, "signal", 1, 64, reply_.signal) ||
      reply_.exit_code.has_value() == reply_.signal.has_value()) {
    return fail("the kernel's reply has no valid exit code or signal");
  }
  if (!bounded_text(frame, "value", kMaxKernelValueBytes, reply_.value) ||
      !bounded_text(frame, "error", kMaxKernelErrorBytes, reply_.error)) {
    return fail("the kernel's reply has a malformed or oversized value or error");
  }
  const auto swept = frame.find("swept");
  if (swept == frame.end() || !swept->is_boolean()) {
    return fail("the kernel's reply does not say whether it swept");
  }
  reply_.swept = swept->get<bool>();
  state_ = State::kDone;
  return state_;
}

KernelClient::KernelClient(UniqueFd control) : control_(std::move(control)) {
  // Not a secret: a nonce only tells this call's reply from a stale or forged one's shape.
  std::random_device seed;
  next_nonce_ = (static_cast<std::uint64_t>(seed()) << 32U) | seed();
}

namespace {

// Milliseconds to the deadline for poll(), at least 0, rounded up so poll does not wake
// just before it.
int poll_timeout(std::chrono::steady_clock::time_point deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<std::int64_t>(ms, 60'000));
}

}  // namespace

KernelCallResult KernelClient::call(const KernelCall& call,
                                    std::chrono::steady_clock::time_point deadline,
                                    const CancelToken& cancel) {
  KernelCallResult result;
  if (lost_) {
    result.detail = "the kernel was lost by an earlier call";
    return result;
  }
  const std::uint64_t nonce = next_nonce_++;
  const std::string frame = encode_kernel_call(call, nonce);
  std::string_view unsent = frame;
  KernelReplyParser parser(nonce);
  std::array<char, 16U << 10> buf{};
  // A kernel that neither reads nor replies (the code stopped it) must not block the host:
  // every wait is a poll bounded by the host's deadline and the cancel fd.
  while (true) {
    if (cancel.cancelled()) {
      result.outcome = KernelOutcome::kCancelled;
      break;
    }
    const int timeout = poll_timeout(deadline);
    std::array<pollfd, 2> fds{{{control_.get(), unsent.empty() ? short{POLLIN} : short{POLLOUT}, 0},
                               {cancel.wait_fd(), POLLIN, 0}}};
    const int ready = ::poll(fds.data(), cancel.wait_fd() >= 0 ? 2 : 1, timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      result.outcome = KernelOutcome::kProtocolError;
      result.detail = "poll on the kernel's channel failed";
      break;
    }
    if (ready == 0) {
      if (std::chrono::steady_clock::now() < deadline) continue;
      result.outcome = KernelOutcome::kDeadline;
      break;
    }
    if (fds[1].revents != 0) continue;  // the token says so at the loop's top
    if (!unsent.empty()) {
      const ssize_t n =
          ::send(control_.get(), unsent.data(), unsent.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n < 0) {
        result.outcome = errno == EPIPE || errno == ECONNRESET ? KernelOutcome::kGone
                                                               : KernelOutcome::kProtocolError;
        result.detail = "the call could not be sent to the kernel";
        break;
      }
      unsent.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    // Never more than the frame still needs: what follows it stays unread.
    const std::size_t want = std::min(parser.wanted(), buf.size());
    const ssize_t n = ::recv(control_.get(), buf.data(), want, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0 && errno != ECONNRESET) {
      result.outcome = KernelOutcome::kProtocolError;
      result.detail = "reading the kernel's reply failed";
      break;
    }
    if (n <= 0) {
      result.outcome = KernelOutcome::kGone;
      result.detail = "the kernel ended (its channel closed)";
      break;
    }
    const auto state = parser.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    if (state == KernelReplyParser::State::kError) {
      result.outcome = KernelOutcome::kProtocolError;
      result.detail = parser.error();
      break;
    }
    if (state == KernelReplyParser::State::kDone) {
      result.outcome = KernelOutcome::kReply;
      result.reply = parser.reply();
      return result;
    }
  }
  lost_ = true;
  return result;
}

}  // namespace cordon
