// Helpers shared by the fuzz targets: a property check that fails the way libFuzzer and
// standalone_main.cpp both report (abort), and a reader that splits one input into the
// fields a target needs.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::fuzz {

// abort() rather than an assert: the property holds in release builds too, and both
// libFuzzer and the standalone main report an abort as a crash with the input.
inline void require(bool ok) {
  if (!ok) std::abort();
}

// Consumes an input from the front: a byte, a little-endian integer, or a field up to the
// next separator. Past the end every read yields zeros / empty, so any input is usable.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(byte()) << (8 * i);
    return v;
  }
  // Up to the next `separator` (consumed) or the end.
  std::string field(char separator = '\n') {
    const std::size_t end = rest_.find(separator);
    std::string out(rest_.substr(0, end));
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
    return out;
  }
  [[nodiscard]] bool empty() const { return rest_.empty(); }
  [[nodiscard]] std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

// Every line of `bytes` ('\n'-separated, the last one even without a newline).
inline std::vector<std::string> lines(std::string_view bytes) {
  std::vector<std::string> out;
  Reader r(bytes);
  while (!r.empty()) out.push_back(r.field('\n'));
  return out;
}

}  // namespace cordon::fuzz
