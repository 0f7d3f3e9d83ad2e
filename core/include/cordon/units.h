// Parsing of the durations and sizes people type ("500ms", "0.5s", "1m", "256M").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon {

// The longest duration cordon takes: what a steady_clock time point (nanoseconds in an
// int64) can add without overflow, about 292 years. Anything beyond is a typo.
inline constexpr std::chrono::milliseconds kMaxDuration{INT64_MAX / 1'000'000};

// "500ms", "0.5s", "2s", "1m", "1h", or a bare number of seconds ("2", "0.25").
// Negative values are accepted and mean "use the default" where a timeout is concerned.
// A positive value shorter than 1 ms ("0.0001", "0.5ms") is refused: it would round to
// 0 ms, which is not what was asked for.
[[nodiscard]] Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// "1024", "64K", "256M", "1G" (binary multiples; an optional trailing "B"/"iB"; case
// insensitive). Rejects negatives, fractions of a byte and overflow.
[[nodiscard]] Result<std::uint64_t> parse_size(std::string_view text);

// "256 MiB", "1.5 KiB", "12 B": for messages and tool descriptions.
[[nodiscard]] std::string format_size(std::uint64_t bytes);
// "200 ms", "5 s", "1.5 s", "2 min".
[[nodiscard]] std::string format_duration(std::chrono::milliseconds d);

}  // namespace cordon
