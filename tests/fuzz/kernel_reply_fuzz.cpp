// The session kernel's reply frames (cordon/session_kernel.h), as the code inside a session
// controls them: a length prefix and tagged records, split anywhere. The first input byte picks the
// chunk size; the rest is the stream. Properties: the parser never wants more than the
// bound, feeding in chunks gives the same outcome as feeding at once, and an accepted reply
// is for this call (nonce), has exactly one of exit code (0..255) and signal (1..64), and
// a value and error within their bounds and valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cordon/session_kernel.h"
#include "cordon/text.h"
#include "fuzz_util.h"

namespace {

using cordon::KernelReplyParser;
using cordon::fuzz::require;

constexpr std::uint64_t kNonce = 7;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = (data[0] % 16U) + 1;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  KernelReplyParser whole(kNonce);
  whole.feed(stream);
  KernelReplyParser pieces(kNonce);
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    const auto before = pieces.state();
    require(pieces.wanted() <= cordon::kMaxKernelReplyBytes);
    const auto after = pieces.feed(stream.substr(at, chunk));
    // kError is final; kDone only turns into kError (bytes after the frame).
    if (before == KernelReplyParser::State::kError) require(after == before);
    if (before == KernelReplyParser::State::kDone)
      require(after != KernelReplyParser::State::kNeedMore);
  }
  require(whole.state() == pieces.state());
  if (whole.state() == KernelReplyParser::State::kError) require(!whole.error().empty());
  if (whole.state() != KernelReplyParser::State::kDone) return 0;
  const cordon::KernelReply& r = whole.reply();
  require(r.nonce == kNonce);
  require(r.exit_code.has_value() != r.signal.has_value());
  if (r.exit_code) require(*r.exit_code >= 0 && *r.exit_code <= 255);
  if (r.signal) require(*r.signal >= 1 && *r.signal <= 64);
  // Text goes into JSON results as it is: valid UTF-8 only.
  const auto valid = [](const std::string& text) { return cordon::to_valid_utf8(text) == text; };
  if (r.value) require(r.value->size() <= cordon::kMaxKernelValueBytes && valid(*r.value));
  if (r.error) require(r.error->size() <= cordon::kMaxKernelErrorBytes && valid(*r.error));
  const cordon::KernelReply& p = pieces.reply();
  require(p.exit_code == r.exit_code && p.signal == r.signal && p.value == r.value &&
          p.error == r.error && p.swept == r.swept);
  return 0;
}
