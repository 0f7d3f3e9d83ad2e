// cordon-soak: the soak and leak test at full size (docs/SOAK.md; scripts/soak.sh).
//
//   cordon-soak [--backend namespace|container]... [--sequential N] [--concurrent N]
//               [--workers MIN-MAX] [--sample-every N] [--pool N] [--markdown FILE]
//               [--runtime NAME]   (the container backend's OCI runtime, e.g. runsc)
//               [--sessions N] [--session-calls N]
//
// Defaults: both isolating backends, 10,000 sequential and 1,000 concurrent runs on 2-8
// threads, a sample every 1,000 runs, a pool of 2; then 1,000 sessions opened and closed
// with 10,000 calls spread over them (where the backend holds sessions). Prints each backend's
// table; with
// --markdown appends the same sections to FILE. Exit status: 0 when every outcome was the
// expected one and every column stayed flat, 1 otherwise (the report names the column),
// 77 when no backend could run here (the kernel or host refused), 2 on a usage error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "soak.h"

namespace {

bool parse_count(const char* text, std::size_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') return false;
  out = v;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: cordon-soak [--backend NAME]... [--sequential N] [--concurrent N]\n"
               "                   [--workers MIN-MAX] [--sample-every N] [--pool N]\n"
               "                   [--markdown FILE] [--runtime NAME]\n"
               "                   [--sessions N] [--session-calls N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // First, while single-threaded (see enter_private_mount_namespace).
  const std::string mount_ns = cordon::soak::enter_private_mount_namespace();
  std::vector<std::string> backends;
  cordon::soak::Config base;
  base.progress = stderr;
  std::string markdown;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (value == nullptr) return usage();
    ++i;
    bool ok = true;
    if (arg == "--backend") {
      backends.emplace_back(value);
    } else if (arg == "--sequential") {
      ok = parse_count(value, base.sequential);
    } else if (arg == "--concurrent") {
      ok = parse_count(value, base.concurrent);
    } else if (arg == "--sessions") {
      ok = parse_count(value, base.sessions);
    } else if (arg == "--session-calls") {
      ok = parse_count(value, base.session_calls);
    } else if (arg == "--sample-every") {
      ok = parse_count(value, base.sample_every);
    } else if (arg == "--pool") {
      ok = parse_count(value, base.pool_size);
    } else if (arg == "--workers") {
      const char* dash = std::strchr(value, '-');
      const std::string lo = dash != nullptr ? std::string(value, dash) : std::string(value);
      ok = parse_count(lo.c_str(), base.min_workers) &&
           parse_count(dash != nullptr ? dash + 1 : value, base.max_workers);
    } else if (arg == "--runtime") {
      base.runtime = value;
    } else if (arg == "--markdown") {
      markdown = value;
    } else {
      ok = false;
    }
    if (!ok) return usage();
  }
  if (backends.empty()) backends = {"namespace", "container"};

  int status = 77;
  for (const std::string& name : backends) {
    cordon::soak::Config config = base;
    config.backend = name;
    cordon::soak::Report report;
    if (!mount_ns.empty()) {
      report.skipped = "no private mount namespace: " + mount_ns;
    } else {
      report = cordon::soak::run_soak(config);
    }
    const std::string section = report.markdown(config);
    std::printf("%s\n", section.c_str());
    std::fflush(stdout);
    if (!markdown.empty()) std::ofstream(markdown, std::ios::app) << section << "\n";
    if (!report.skipped.empty()) continue;
    if (status == 77) status = 0;
    if (!report.passed()) status = 1;
  }
  return status;
}
