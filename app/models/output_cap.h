// The live view's share of the output cap: the Result keeps the first `cap` bytes of each
// stream (Limits::output_bytes, per stream), so the live view shows the same bytes and
// marks the point where the Result's copy ends, instead of a longer tail the Result never
// had.
#pragma once

#include <QByteArray>
#include <array>
#include <cstdint>

namespace cordon::inspector {

class OutputCap {
 public:
  explicit OutputCap(std::uint64_t cap_bytes = 0) : cap_(cap_bytes) {}

  struct Take {
    QByteArray shown;      // the part of the chunk within the cap
    bool cut_now = false;  // this chunk crossed the cap: mark the cut point once
  };
  // The part of `chunk` of stream 0 (stdout) or 1 (stderr) that the Result keeps.
  [[nodiscard]] Take take(int stream, const QByteArray& chunk);
  [[nodiscard]] bool cut(int stream) const { return cut_.at(index(stream)); }
  [[nodiscard]] std::uint64_t cap_bytes() const { return cap_; }

 private:
  static std::size_t index(int stream) { return stream == 1 ? 1 : 0; }

  std::uint64_t cap_;
  std::array<std::uint64_t, 2> seen_{};
  std::array<bool, 2> cut_{};
};

}  // namespace cordon::inspector
