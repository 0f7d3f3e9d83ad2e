#include "cordon/session_kernel.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <random>
#include <utility>

#include "cordon/text.h"
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

namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (unsigned shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((v >> shift) & 0xFFU));
}

std::uint64_t get_le(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = (v << 8U) | static_cast<unsigned char>(bytes[i]);
  return v;
}

void put_record(std::string& out, KernelTag tag, std::string_view data) {
  out.push_back(static_cast<char>(tag));
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  out += data;
}

}  // namespace

std::string encode_kernel_call(const KernelCall& call, std::uint64_t nonce) {
  std::string body;
  std::string le_nonce;
  for (unsigned shift = 0; shift < 64; shift += 8)
    le_nonce.push_back(static_cast<char>((nonce >> shift) & 0xFFU));
  put_record(body, KernelTag::kNonce, le_nonce);
  put_record(body, KernelTag::kLanguage, call.language);
  put_record(body, KernelTag::kCode, call.code);
  for (const std::string& arg : call.argv) put_record(body, KernelTag::kArg, arg);
  if (call.stdin_data) put_record(body, KernelTag::kStdin, *call.stdin_data);
  std::string out;
  out.reserve(4 + body.size());
  put_u32(out, static_cast<std::uint32_t>(body.size()));
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

KernelReplyParser::State KernelReplyParser::finish() {
  std::string_view rest = body_;
  // Each field at most once; a tag the protocol does not have is an error.
  std::optional<std::string_view> nonce;
  std::optional<std::string_view> exit_code;
  std::optional<std::string_view> signal;
  std::optional<std::string_view> value;
  std::optional<std::string_view> error;
  std::optional<std::string_view> swept;
  using Field = std::pair<KernelTag, std::optional<std::string_view>*>;
  const std::array<Field, 6> fields{{{KernelTag::kNonce, &nonce},
                                     {KernelTag::kExitCode, &exit_code},
                                     {KernelTag::kSignal, &signal},
                                     {KernelTag::kValue, &value},
                                     {KernelTag::kError, &error},
                                     {KernelTag::kSwept, &swept}}};
  while (!rest.empty()) {
    if (rest.size() < 5) return fail("the kernel's reply has a cut record");
    const auto tag = static_cast<KernelTag>(rest[0]);
    const auto size = static_cast<std::size_t>(get_le(rest.substr(1, 4)));
    rest.remove_prefix(5);
    if (size > rest.size()) return fail("the kernel's reply has a record past its end");
    const std::string_view data = rest.substr(0, size);
    rest.remove_prefix(size);
    const auto* known = std::ranges::find(fields, tag, &Field::first);
    if (known == fields.end()) {
      return fail("the kernel's reply has a record the protocol does not have");
    }
    std::optional<std::string_view>* field = known->second;
    if (field->has_value()) return fail("the kernel's reply repeats a record");
    *field = data;
  }
  if (!nonce || nonce->size() != 8 || get_le(*nonce) != expected_nonce_) {
    return fail("the kernel's reply is not for this call (nonce)");
  }
  reply_.nonce = expected_nonce_;
  const auto small_int = [](std::optional<std::string_view> field, std::int64_t lo, std::int64_t hi,
                            std::optional<int>& out) {
    if (!field) return true;
    if (field->size() != 4) return false;
    const auto v = static_cast<std::int64_t>(static_cast<std::int32_t>(get_le(*field)));
    if (v < lo || v > hi) return false;
    out = static_cast<int>(v);
    return true;
  };
  if (!small_int(exit_code, 0, 255, reply_.exit_code) || !small_int(signal, 1, 64, reply_.signal) ||
      reply_.exit_code.has_value() == reply_.signal.has_value()) {
    return fail("the kernel's reply has no valid exit code or signal");
  }
  // Text is UTF-8 within its bound (it goes into JSON results as it is).
  const auto text = [](std::optional<std::string_view> field, std::size_t max,
                       std::optional<std::string>& out) {
    if (!field) return true;
    bool lossy = false;
    if (field->size() > max) return false;
    std::string valid = to_valid_utf8(*field, &lossy);
    if (lossy) return false;
    out = std::move(valid);
    return true;
  };
  if (!text(value, kMaxKernelValueBytes, reply_.value) ||
      !text(error, kMaxKernelErrorBytes, reply_.error)) {
    return fail("the kernel's reply has an oversized value or error, or one that is not UTF-8");
  }
  if (!swept || swept->size() != 1 || static_cast<unsigned char>((*swept)[0]) > 1) {
    return fail("the kernel's reply does not say whether it swept");
  }
  reply_.swept = (*swept)[0] == 1;
  body_.clear();
  body_.shrink_to_fit();
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
                                    const CancelToken& cancel, proc::OutputPump* output) {
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
    // The channel (written, then read), the cancel fd, and the output pipes still open.
    std::array<pollfd, 4> fds{};
    nfds_t count = 0;
    fds[count++] = {control_.get(), unsent.empty() ? short{POLLIN} : short{POLLOUT}, 0};
    const nfds_t first_pipe = cancel.wait_fd() >= 0 ? 2 : 1;
    if (first_pipe == 2) fds[count++] = {cancel.wait_fd(), POLLIN, 0};
    for (int i = 0; output != nullptr && i < 2; ++i) {
      if (output->fd(i) >= 0) fds[count++] = {output->fd(i), POLLIN, 0};
    }
    const int ready = ::poll(fds.data(), count, timeout);
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
    if (count > first_pipe && std::any_of(fds.begin() + first_pipe, fds.begin() + count,
                                          [](const pollfd& p) { return p.revents != 0; })) {
      if (Status read = output->drain_ready(); !read) {
        result.output = std::move(read);
        output = nullptr;  // left unread from now on; the call says why
      }
    }
    if (first_pipe == 2 && fds[1].revents != 0) continue;  // the token says so at the loop's top
    if (fds[0].revents == 0) continue;
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
