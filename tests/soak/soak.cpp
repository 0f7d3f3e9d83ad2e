#include "soak.h"

#include <sched.h>
#include <sys/mount.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "cordon/cancel.h"
#include "cordon/plugin_registry.h"

namespace cordon::soak {
namespace {

using Clock = std::chrono::steady_clock;

std::size_t index_of(Kind kind) {
  for (std::size_t i = 0; i < kAllKinds.size(); ++i) {
    if (kAllKinds[i] == kind) return i;
  }
  return 0;
}

// Cancels a run through the API a fixed time after its code started (RunState::kRunning).
class MidRunCancel final : public RunObserver {
 public:
  MidRunCancel() : thread_([this] { wait_and_cancel(); }) {}
  MidRunCancel(const MidRunCancel&) = delete;
  MidRunCancel& operator=(const MidRunCancel&) = delete;
  ~MidRunCancel() override {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  [[nodiscard]] CancelToken token() const { return source_.token(); }
  void on_state(RunState state) override {
    if (state != RunState::kRunning) return;
    {
      const std::lock_guard lock(mutex_);
      running_ = true;
    }
    cv_.notify_all();
  }

 private:
  void wait_and_cancel() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return running_ || done_; });
    if (done_) return;
    // The code runs now; cancel while it still does (it sleeps for 30 s).
    if (cv_.wait_for(lock, kCancelAfter, [this] { return done_; })) return;
    source_.cancel();
  }

  CancelSource source_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool running_ = false;
  bool done_ = false;
  std::thread thread_;  // last: started once the rest is constructed
};

class Soak {
 public:
  Soak(const Config& config, Backend& backend, Report& report)
      : config_(config), backend_(backend), report_(report) {}

  void run_one(std::size_t index, Kind kind) {
    const RunRequest request = request_for(kind);
    RunResult result;
    if (kind == Kind::kCancel) {
      MidRunCancel cancel;
      result = backend_.run(request, cancel.token(), &cancel);
    } else if (kind == Kind::kCancelEarly) {
      CancelSource cancel;
      cancel.cancel();
      result = backend_.run(request, cancel.token(), nullptr);
    } else {
      result = backend_.run(request, CancelToken{}, nullptr);
    }
    const std::optional<std::string> wrong = wrong_outcome(kind, result);
    const std::lock_guard lock(mutex_);
    ++report_.runs[index_of(kind)];
    if (!wrong) return;
    ++report_.wrong[index_of(kind)];
    if (report_.wrong_examples.size() < 20) {
      report_.wrong_examples.push_back("run " + std::to_string(index) + " (" +
                                       std::string(to_string(kind)) + "): " + *wrong);
    }
  }

  // Waits until asynchronous teardown is over (the pool destroys used sandboxes and
  // refills in the background), then samples: done as soon as every count equals the
  // reference, or has not changed for 3 s (then what is left stays, and is judged).
  Sample settled_sample(const Sample* reference) {
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    Sample last = take_sample();
    auto unchanged_since = Clock::now();
    while (Clock::now() < give_up) {
      if (reference != nullptr && last.same_counts(*reference)) break;
      if (Clock::now() - unchanged_since >= std::chrono::seconds(3)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Sample next = take_sample();
      if (!next.same_counts(last)) unchanged_since = Clock::now();
      last = std::move(next);
    }
    last.runs = done_;
    last.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
    if (config_.progress != nullptr) {
      std::fprintf(config_.progress, "soak %s: %zu runs, %.0f s, %zu wrong, rss %lld kB\n",
                   config_.backend.c_str(), done_, last.elapsed_s, report_.total_wrong(),
                   static_cast<long long>(last.rss_kb));
      std::fflush(config_.progress);
    }
    return last;
  }

  void sample() { report_.samples.push_back(settled_sample(&report_.samples.front())); }

  void session_wrong(std::size_t index, const std::string& what) {
    const std::lock_guard lock(mutex_);
    ++report_.session_wrong;
    if (report_.wrong_examples.size() < 20) {
      report_.wrong_examples.push_back("session " + std::to_string(index) + ": " + what);
    }
  }

  // One session: opened, its calls in kSessionCycle's order, closed.
  void one_session(std::size_t index, std::size_t calls) {
    Result<std::unique_ptr<BackendSession>> session = backend_.open_session(session_options());
    if (!session) return session_wrong(index, "open: " + session.error().describe());
    for (std::size_t j = 0; j < calls; ++j) {
      const SessionCall call = kSessionCycle[j % kSessionCycle.size()];
      if (auto wrong = session_call(**session, call)) {
        session_wrong(index, std::string(to_string(call)) + " (call " + std::to_string(j + 1) +
                                 "): " + *wrong);
      }
    }
    const std::lock_guard lock(mutex_);
    ++report_.sessions;
    report_.session_calls += calls;
  }

  // Sessions opened and closed in batches of a quarter, each on 2, 3, ... max_workers
  // threads in turn; a sample after each batch, judged against the first like the rest.
  void run_sessions() {
    if (config_.sessions == 0) return;
    Result<std::unique_ptr<BackendSession>> probe = backend_.open_session(session_options());
    if (!probe) {
      report_.sessions_skipped = probe.error().describe();
      return;
    }
    probe->reset();
    const std::size_t calls = std::max<std::size_t>(1, config_.session_calls / config_.sessions);
    const std::size_t batch_size = std::max<std::size_t>(1, config_.sessions / 4);
    std::size_t workers = config_.min_workers;
    for (std::size_t begin = 0; begin < config_.sessions; begin += batch_size) {
      const std::size_t end = std::min(config_.sessions, begin + batch_size);
      std::atomic<std::size_t> next{begin};
      std::vector<std::thread> threads;
      threads.reserve(workers);
      for (std::size_t w = 0; w < workers; ++w) {
        threads.emplace_back([&] {
          for (std::size_t i = next++; i < end; i = next++) one_session(i, calls);
        });
      }
      for (auto& t : threads) t.join();
      workers = workers >= config_.max_workers ? config_.min_workers : workers + 1;
      sample();
    }
  }

  void run() {
    start_ = Clock::now();
    // Warm-up, before the first sample: one run of each kind (checked like all others),
    // then the same on max_workers threads at once (the allocator's per-thread arenas), so
    // the first sample sees the backend as it is between runs for the rest of its life.
    for (const Kind kind : kAllKinds) run_one(0, kind);
    std::vector<std::thread> warm;
    warm.reserve(config_.max_workers);
    for (std::size_t w = 0; w < config_.max_workers; ++w) {
      warm.emplace_back([this, w] { run_one(0, kAllKinds[w % kAllKinds.size()]); });
    }
    for (auto& t : warm) t.join();
    report_.samples.push_back(settled_sample(nullptr));

    std::size_t since_sample = 0;
    for (std::size_t i = 0; i < config_.sequential; ++i) {
      run_one(done_, kind_of_run(done_));
      ++done_;
      if (++since_sample == config_.sample_every) {
        sample();
        since_sample = 0;
      }
    }
    // Concurrent: batches of at most 100 runs, each on 2, 3, ... max_workers threads in
    // turn, pulling run indices from one counter; samples between batches only.
    std::size_t workers = config_.min_workers;
    std::size_t left = config_.concurrent;
    while (left > 0) {
      const std::size_t batch =
          std::min({left, std::size_t{100}, config_.sample_every - since_sample});
      std::atomic<std::size_t> next{done_};
      const std::size_t end = done_ + batch;
      std::vector<std::thread> threads;
      threads.reserve(workers);
      for (std::size_t w = 0; w < workers; ++w) {
        threads.emplace_back([&] {
          for (std::size_t i = next++; i < end; i = next++) run_one(i, kind_of_run(i));
        });
      }
      for (auto& t : threads) t.join();
      done_ = end;
      left -= batch;
      since_sample += batch;
      workers = workers >= config_.max_workers ? config_.min_workers : workers + 1;
      if (since_sample == config_.sample_every) {
        sample();
        since_sample = 0;
      }
    }
    if (since_sample > 0) sample();
    run_sessions();
    report_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  }

 private:
  const Config& config_;
  Backend& backend_;
  Report& report_;
  std::mutex mutex_;
  std::size_t done_ = 0;
  Clock::time_point start_;
};

}  // namespace

std::size_t Report::total_runs() const {
  std::size_t n = 0;
  for (const std::size_t r : runs) n += r;
  return n;
}

std::size_t Report::total_wrong() const {
  std::size_t n = 0;
  for (const std::size_t w : wrong) n += w;
  return n;
}

std::string Report::markdown(const Config& config) const {
  std::string out = "### " + config.backend + "\n\n";
  if (!skipped.empty()) return out + "Skipped: " + skipped + "\n";
  if (!error.empty()) return out + "Soak error: " + error + "\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "%zu runs (%zu sequential, then %zu concurrent on %zu-%zu threads) after %zu "
                "warm-up runs, pool of %zu, in %.0f s; a sample every %zu runs.\n\n",
                total_runs() - kAllKinds.size() - config.max_workers, config.sequential,
                config.concurrent, config.min_workers, config.max_workers,
                kAllKinds.size() + config.max_workers, config.pool_size, seconds,
                config.sample_every);
  out += line;
  out += table(samples) + "\n| kind | runs | wrong outcome |\n|---|---:|---:|\n";
  for (std::size_t i = 0; i < kAllKinds.size(); ++i) {
    out += "| " + std::string(to_string(kAllKinds[i])) + " | " + std::to_string(runs[i]) + " | " +
           std::to_string(wrong[i]) + " |\n";
  }
  out += "\n";
  if (!sessions_skipped.empty()) {
    out += "Sessions: none (" + sessions_skipped + ").\n\n";
  } else if (config.sessions > 0) {
    out += "Sessions: " + std::to_string(sessions) + " opened and closed, " +
           std::to_string(session_calls) + " calls in them (sh with a file, python, a failure, " +
           "a timeout, a file from the host), " + std::to_string(session_wrong) + " wrong.\n\n";
  }
  for (const std::string& w : wrong_examples) out += "- wrong: " + w + "\n";
  for (const Leak& l : leaks) {
    out += "- LEAK: " + l.column + " grew from " + std::to_string(l.first) + " to " +
           std::to_string(l.last) + "\n";
  }
  const std::string rss =
      kRssJudged
          ? "RSS within " + std::to_string(config.rss_tolerance_kb) + " kB of its reference sample"
          : "RSS not judged (a sanitizer's quarantine holds freed memory)";
  out += passed() ? "\nFlat: every count equal from the first sample to the last, " + rss +
                        "; every outcome as expected.\n"
                  : "\nFAILED.\n";
  return out;
}

std::string enter_private_mount_namespace() {
  static const std::string result = [] {
    if (::unshare(CLONE_NEWNS) != 0) {
      return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    }
    // Private, so nothing mounted here reaches the host's namespace and nothing mounted
    // there by others shows up here.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("making / private: ") + std::strerror(errno);
    }
    return std::string();
  }();
  return result;
}

Report run_soak(const Config& config) {
  Report report;
  if (config.sample_every == 0 || config.min_workers == 0 ||
      config.max_workers < config.min_workers) {
    report.error = "bad configuration: sample_every and workers must be positive";
    return report;
  }
  if (std::string why = enter_private_mount_namespace(); !why.empty()) {
    report.skipped = "no private mount namespace: " + why;
    return report;
  }
  // Before the backend exists, and again after it is gone: what it made must all be gone.
  const Sample before = take_sample();
  PluginRegistry registry;
  registry.discover(config.plugin_dirs.empty() ? PluginRegistry::default_search_path()
                                               : config.plugin_dirs);
  // As `cordon mcp` creates it (cli/mcp/service.cpp): a warm pool, with python and sh
  // started ahead in some of it (the namespace backend; others ignore it).
  BackendOptions options;
  options.pool_size = config.pool_size;
  if (!config.runtime.empty()) options.runtime = config.runtime;
  if (config.pool_size > 0) options.prestart = "python,sh";
  Result<BackendPtr> backend = registry.create(config.backend, options);
  if (!backend) {
    report.skipped =
        "cannot create the " + config.backend + " backend: " + backend.error().describe();
    return report;
  }
  if (const Probe probe = (*backend)->probe(); !probe.available) {
    report.skipped = config.backend + " backend unavailable: " + probe.reason;
    return report;
  }
  Soak(config, **backend, report).run();
  report.leaks = leaks(report.samples, config.rss_tolerance_kb);
  backend->reset();
  // The backend's destructor stops its pool and removes what it made; a moment for the
  // kernel to finish tearing down the last namespaces.
  Sample after = take_sample();
  for (int i = 0; i < 100 && !after.same_counts(before); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = take_sample();
  }
  for (const Leak& l : leaks({before, after}, /*rss_tolerance_kb=*/INT64_MAX / 2)) {
    report.leaks.push_back({"after the backend is destroyed: " + l.column, l.first, l.last});
  }
  return report;
}

}  // namespace cordon::soak
