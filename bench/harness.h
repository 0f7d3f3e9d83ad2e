// A small benchmark harness for ratios measured in one run.
//
// Performance targets in cordon are ratios against a baseline measured in the same run
// on the same machine (these machines are shared and noisy), so the harness interleaves
// the candidate and its baseline round by round and compares medians: a burst of noise
// hits both sides alike instead of one.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cordon::bench {

struct Sample {
  std::string name;
  std::vector<double> ms;  // one wall-clock time per iteration
  [[nodiscard]] double median() const;
  [[nodiscard]] double percentile(double p) const;
};

struct Comparison {
  std::string label;
  Sample candidate;
  Sample baseline;
  double target = 0;  // the candidate/baseline ratio not to exceed (0: report only)
  [[nodiscard]] double ratio() const { return candidate.median() / baseline.median(); }
  [[nodiscard]] bool met() const { return target <= 0 || ratio() <= target; }
};

// Runs `warmup` untimed rounds, then `rounds` rounds of one candidate and one baseline
// iteration each, alternating which goes first. `settle`, if given, runs untimed before
// every iteration of either side (e.g. waiting until a warm pool has refilled, as it
// would between the requests of a server, so that neither side is timed while the pool
// works in the background).
Comparison compare(const std::string& label, const std::string& candidate_name,
                   const std::function<void()>& candidate, const std::string& baseline_name,
                   const std::function<void()>& baseline, int rounds, int warmup, double target,
                   const std::function<void()>& settle = {});

void print(const Comparison& c);
// The integer after `name` on the command line ("--rounds 200"), else `fallback`.
int arg_int(int argc, char** argv, const char* name, int fallback);
// Milliseconds from `t` to now, fractional.
double ms_since(std::chrono::steady_clock::time_point t);
// Runs `run_once` back to back on `threads` threads for `duration`; runs per second.
double runs_per_second(const std::function<void()>& run_once, int threads,
                       std::chrono::milliseconds duration);
// A JSON line per comparison for machines (prefix "BENCH_JSON ").
void print_json(const Comparison& c);

}  // namespace cordon::bench
