#include "harness.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace cordon::bench {

double Sample::percentile(double p) const {
  if (ms.empty()) return 0;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

double Sample::median() const { return percentile(0.5); }

namespace {
double time_once(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count();
}
}  // namespace

Comparison compare(const std::string& label, const std::string& candidate_name,
                   const std::function<void()>& candidate, const std::string& baseline_name,
                   const std::function<void()>& baseline, int rounds, int warmup, double target,
                   const std::function<void()>& settle) {
  Comparison c{label, {candidate_name, {}}, {baseline_name, {}}, target};
  auto timed = [&](const std::function<void()>& f) {
    if (settle) settle();
    return time_once(f);
  };
  for (int i = 0; i < warmup; ++i) {
    (void)timed(candidate);
    (void)timed(baseline);
  }
  c.candidate.ms.reserve(static_cast<std::size_t>(rounds));
  c.baseline.ms.reserve(static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) {
    // Alternate the order so neither side always runs right after the other's cleanup.
    if (i % 2 == 0) {
      c.candidate.ms.push_back(timed(candidate));
      c.baseline.ms.push_back(timed(baseline));
    } else {
      c.baseline.ms.push_back(timed(baseline));
      c.candidate.ms.push_back(timed(candidate));
    }
  }
  return c;
}

void print(const Comparison& c) {
  std::printf("%s\n", c.label.c_str());
  std::printf("  %-44s median %8.3f ms  p90 %8.3f ms\n", c.candidate.name.c_str(),
              c.candidate.median(), c.candidate.percentile(0.9));
  std::printf("  %-44s median %8.3f ms  p90 %8.3f ms\n", c.baseline.name.c_str(),
              c.baseline.median(), c.baseline.percentile(0.9));
  if (c.target > 0) {
    std::printf("  ratio %.2fx (target <= %.2fx): %s\n", c.ratio(), c.target,
                c.met() ? "MET" : "MISSED");
  } else {
    std::printf("  ratio %.2fx\n", c.ratio());
  }
}

void print_json(const Comparison& c) {
  std::printf(
      "BENCH_JSON {\"label\":\"%s\",\"candidate\":\"%s\",\"candidate_median_ms\":%.4f,"
      "\"baseline\":\"%s\",\"baseline_median_ms\":%.4f,\"ratio\":%.4f,\"target\":%.2f,"
      "\"met\":%s}\n",
      c.label.c_str(), c.candidate.name.c_str(), c.candidate.median(), c.baseline.name.c_str(),
      c.baseline.median(), c.ratio(), c.target, c.met() ? "true" : "false");
}

int arg_int(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double runs_per_second(const std::function<void()>& run_once, int threads,
                       std::chrono::milliseconds duration) {
  std::atomic<int> done{0};
  const auto t0 = std::chrono::steady_clock::now();
  const auto until = t0 + duration;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      while (std::chrono::steady_clock::now() < until) {
        run_once();
        ++done;
      }
    });
  }
  for (auto& w : workers) w.join();
  return done * 1000.0 / ms_since(t0);
}

}  // namespace cordon::bench
