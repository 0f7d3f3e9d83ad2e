// Newline-delimited input with a bounded buffer: a line longer than the bound is reported
// as too long and skipped to its end, never held whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::cli::mcp {

class LineReader {
 public:
  explicit LineReader(std::size_t max_line_bytes) : max_(max_line_bytes) {}

  struct Line {
    std::string text;
    bool too_long = false;  // `text` is empty: the line was skipped
  };

  // Feeds bytes read; calls `on_line(Line)` for every complete line in them.
  template <typename F>
  void feed(std::string_view bytes, F&& on_line) {
    while (!bytes.empty()) {
      const std::size_t nl = bytes.find('\n');
      const std::string_view part = bytes.substr(0, nl);
      if (!skipping_) {
        if (buffer_.size() + part.size() > max_) {
          buffer_.clear();
          buffer_.shrink_to_fit();
          skipping_ = true;
        } else {
          buffer_.append(part);
        }
      }
      if (nl == std::string_view::npos) return;
      on_line(take());
      bytes.remove_prefix(nl + 1);
    }
  }

  // At end of input: the last line, when it had no newline (empty text when none).
  [[nodiscard]] Line finish() { return take(); }

 private:
  Line take() {
    Line line{.text = std::move(buffer_), .too_long = skipping_};
    buffer_.clear();
    skipping_ = false;
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    return line;
  }

  std::size_t max_;
  std::string buffer_;
  bool skipping_ = false;
};

}  // namespace cordon::cli::mcp
