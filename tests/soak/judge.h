// Whether the samples of a soak stay flat, and the report's table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probes.h"

namespace cordon::soak {

// RSS may grow while the process warms up (allocator arenas of the worker threads, the
// plugin's caches, the pool's first items): it is compared from the sample a quarter of
// the way through the runs, and may exceed that sample by this much at the end.
inline constexpr std::int64_t kRssToleranceKb = 4096;

// Under AddressSanitizer freed memory stays in its quarantine (up to 256 MiB) and RSS
// grows with it: RSS is then shown but not judged.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kRssJudged = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kRssJudged = false;
#else
inline constexpr bool kRssJudged = true;
#endif
#else
inline constexpr bool kRssJudged = true;
#endif

struct Leak {
  std::string column;
  std::int64_t first = 0;
  std::int64_t last = 0;
};

// The columns that grew between the first and the last sample (every count exactly; RSS
// from the reference sample above, within kRssToleranceKb). Needs at least two samples.
[[nodiscard]] std::vector<Leak> leaks(const std::vector<Sample>& samples,
                                      std::int64_t rss_tolerance_kb = kRssToleranceKb);

// The index of the RSS reference sample: a quarter of the way through, at least the
// second sample (the first is taken before any batch).
[[nodiscard]] std::size_t rss_reference(std::size_t sample_count);

// The samples as a Markdown table, one row per sample.
[[nodiscard]] std::string table(const std::vector<Sample>& samples);

}  // namespace cordon::soak
