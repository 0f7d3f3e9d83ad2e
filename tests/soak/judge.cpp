#include "judge.h"

#include <algorithm>
#include <cstdio>

namespace cordon::soak {

std::size_t rss_reference(std::size_t sample_count) {
  if (sample_count < 2) return 0;
  return std::min(sample_count - 1, std::max<std::size_t>(1, (sample_count - 1) / 4));
}

std::vector<Leak> leaks(const std::vector<Sample>& samples, std::int64_t rss_tolerance_kb) {
  std::vector<Leak> out;
  if (samples.size() < 2) return out;
  const Sample& first = samples.front();
  const Sample& last = samples.back();
  for (std::size_t i = 0; i < first.counts.size(); ++i) {
    const auto& [name, before] = first.counts[i];
    // A column the last sample lacks (a hierarchy unmounted meanwhile) cannot be judged
    // flat: report it as grown from its value to nothing.
    const std::int64_t after =
        i < last.counts.size() && last.counts[i].first == name ? last.counts[i].second : before + 1;
    if (after > before) out.push_back({name, before, after});
  }
  const Sample& ref = samples[rss_reference(samples.size())];
  if (kRssJudged && last.rss_kb > ref.rss_kb + rss_tolerance_kb)
    out.push_back({"rss_kb", ref.rss_kb, last.rss_kb});
  return out;
}

std::string table(const std::vector<Sample>& samples) {
  if (samples.empty()) return "";
  std::string out = "| runs | s |";
  std::string rule = "|---:|---:|";
  for (const auto& [name, value] : samples.front().counts) {
    out += " " + name + " |";
    rule += "---:|";
  }
  out += " rss_kb |\n" + rule + "---:|\n";
  for (const Sample& s : samples) {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.0f", s.elapsed_s);
    out += "| " + std::to_string(s.runs) + " | " + elapsed + " |";
    for (const auto& [name, value] : s.counts) out += " " + std::to_string(value) + " |";
    out += " " + std::to_string(s.rss_kb) + " |\n";
  }
  return out;
}

}  // namespace cordon::soak
