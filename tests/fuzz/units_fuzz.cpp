// Durations and sizes as people type them (--timeout, --memory, --cpu, ... and the MCP
// server's flags): parse_duration and parse_size, and what is printed from their values.
// Properties: an accepted duration is within kMaxDuration (and, when positive, at least
// 1 ms), and reads back the same from its exact spelling ("<ms>ms"); an accepted size
// reads back the same from its byte count; formatting any accepted value never throws.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/request.h"
#include "cordon/units.h"
#include "fuzz_util.h"

namespace {

using namespace cordon;
using cordon::fuzz::require;

void check_duration(std::string_view text) {
  const Result<std::chrono::milliseconds> d = parse_duration(text);
  if (!d) {
    require(!d.error().message.empty());
    return;
  }
  require(*d <= kMaxDuration && *d >= -kMaxDuration);
  if (d->count() > 0) {
    const Result<std::chrono::milliseconds> again =
        parse_duration(std::to_string(d->count()) + "ms");
    require(again.has_value() && *again == *d);
    (void)format_duration(*d);
  }
}

void check_size(std::string_view text) {
  const Result<std::uint64_t> s = parse_size(text);
  if (!s) {
    require(!s.error().message.empty());
    return;
  }
  const Result<std::uint64_t> again = parse_size(std::to_string(*s));
  require(again.has_value() && *again == *s);
  (void)format_size(*s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_duration(bytes);
  check_size(bytes);
  (void)parse_language(bytes);
  // The printers take any value, not only parsed ones.
  if (size >= 8) {
    std::uint64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw |= static_cast<std::uint64_t>(data[i]) << (8 * i);
    (void)format_size(raw);
    (void)format_duration(std::chrono::milliseconds(static_cast<std::int64_t>(raw)));
  }
  return 0;
}
