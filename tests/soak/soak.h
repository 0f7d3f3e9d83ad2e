// The soak: many runs of every kind (workload.h) through one long-lived backend created
// by the plugin registry with its warm pool, as `cordon mcp` holds it, sampling the host
// objects (probes.h) after every batch; the samples must stay flat (judge.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "judge.h"
#include "probes.h"
#include "workload.h"

namespace cordon::soak {

struct Config {
  std::string backend;             // "namespace" or "container"
  std::size_t sequential = 10000;  // runs one after the other
  std::size_t concurrent = 1000;   // runs on several threads at once
  std::size_t min_workers = 2;     // concurrent batches cycle through this many threads..
  std::size_t max_workers = 8;     // ..up to this many
  std::size_t sample_every = 1000;
  // Then sessions (issue #41): this many opened and closed, on min..max_workers threads,
  // with `session_calls` calls spread over them (workload.h's kSessionCycle); none where
  // the backend holds no sessions.
  std::size_t sessions = 1000;
  std::size_t session_calls = 10000;
  std::size_t pool_size = 2;  // the backend's warm pool, as `cordon mcp` keeps it
  std::string runtime;        // the container backend's OCI runtime ("runsc"); empty: its default
  std::int64_t rss_tolerance_kb = kRssToleranceKb;
  std::vector<std::filesystem::path> plugin_dirs;  // empty: the registry's default path
  std::FILE* progress = nullptr;                   // a line per sample, if set
};

struct Report {
  std::string skipped;  // why the soak could not run here (the kernel or host refused)
  std::string error;    // the soak itself failed (not a finding about the backend)
  std::vector<Sample> samples;
  std::array<std::size_t, kAllKinds.size()> runs{};
  std::array<std::size_t, kAllKinds.size()> wrong{};
  std::vector<std::string> wrong_examples;  // the first few, with run index and kind
  std::size_t sessions = 0;                 // opened (and closed)
  std::size_t session_calls = 0;
  std::size_t session_wrong = 0;  // calls (or opens) that went wrong
  std::string sessions_skipped;   // why no session ran (the backend holds none)
  std::vector<Leak> leaks;
  double seconds = 0;

  [[nodiscard]] std::size_t total_runs() const;
  [[nodiscard]] std::size_t total_wrong() const;
  [[nodiscard]] bool passed() const {
    return skipped.empty() && error.empty() && total_wrong() == 0 && session_wrong == 0 &&
           leaks.empty();
  }
  // The Markdown section of this report: table, runs per kind, verdict.
  [[nodiscard]] std::string markdown(const Config& config) const;
};

// Enters a private mount namespace (mounts stay this process's own, so the mount count
// is not moved by anyone else's). Only while the process is single-threaded; once.
[[nodiscard]] std::string enter_private_mount_namespace();

[[nodiscard]] Report run_soak(const Config& config);

}  // namespace cordon::soak
