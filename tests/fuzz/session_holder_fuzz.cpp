// Bytes as a `cordon session` peer sends them to a session's holder (cli/session_protocol.h),
// fed to the holder's frame reader in pieces of every size the input's first byte picks:
// it never throws, never holds more than its bound, refuses a length over the bound, and a
// whole frame it reads is a JSON value that, framed again and read in one piece, reads back
// equal; every value read is then checked as a request (holder_op) without throwing.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "session_protocol.h"

namespace {

void require(bool ok) {
  if (!ok) std::abort();  // the standalone main and libFuzzer both report an abort
}

// A small bound, so that lengths over it are found, and one over it is never buffered.
constexpr std::uint32_t kBound = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 17;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  cordon::cli::FrameReader reader(kBound);
  while (!bytes.empty()) {
    const std::string_view chunk = bytes.substr(0, piece);
    std::size_t used = 0;
    auto got = reader.feed(chunk, &used);
    require(used <= chunk.size());
    if (!got) return 0;  // over the bound, or not JSON: the holder drops the connection
    bytes.remove_prefix(used);
    if (!*got) {
      require(used == chunk.size());  // more is needed only once the chunk is all taken
      continue;
    }
    const nlohmann::json& message = **got;
    (void)cordon::cli::holder_op(message);
    const std::string again = cordon::cli::encode_frame(message);
    cordon::cli::FrameReader second(cordon::cli::kMaxSessionFrameBytes);
    std::size_t used_again = 0;
    auto reread = second.feed(again, &used_again);
    require(reread.has_value() && reread->has_value() && used_again == again.size());
    require(**reread == message);
  }
  return 0;
}
