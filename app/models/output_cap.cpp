#include "output_cap.h"

#include <algorithm>

namespace cordon::inspector {

OutputCap::Take OutputCap::take(int stream, const QByteArray& chunk) {
  const std::size_t i = index(stream);
  Take out;
  if (cut_[i]) return out;
  const std::uint64_t room = cap_ - std::min(cap_, seen_[i]);
  const auto size = static_cast<std::uint64_t>(chunk.size());
  seen_[i] += size;
  if (size <= room) {
    out.shown = chunk;
    return out;
  }
  out.shown = chunk.left(static_cast<qsizetype>(room));
  out.cut_now = true;
  cut_[i] = true;
  return out;
}

}  // namespace cordon::inspector
