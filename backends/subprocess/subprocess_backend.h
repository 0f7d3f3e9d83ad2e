// The subprocess backend: the code runs as a plain child process of cordon, in its own
// session, in a fresh temp dir with a minimal environment, behind a deadline that kills
// its whole process tree. It isolates nothing: the code can read the host's files, use
// the network and see other processes. Its capabilities() say exactly that.
#pragma once

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "cordon/backend.h"
#include "cordon/proc/cgroup2.h"

namespace cordon::subprocess {

struct SubprocessOptions {
  // Use the subreaper helper even where a cgroup could be had (tests of the fallback).
  // The plugin reads it from CORDON_SUBPROCESS_FORCE_FALLBACK=1 at creation.
  bool force_fallback = false;
  // Asked to run in an environment (BackendOptions::system_root), which it cannot: it runs
  // the host's own files. Then it is unavailable with that reason, so `auto` passes it by
  // and naming it is refused, instead of running the code on the host's /usr.
  bool environment_asked = false;
};

class SubprocessBackend final : public Backend {
 public:
  // Stores the options; the host is looked at by probe() and changed by prepare().
  explicit SubprocessBackend(SubprocessOptions options);

  [[nodiscard]] std::string_view name() const override { return "subprocess"; }
  [[nodiscard]] std::string_view version() const override { return "0.1.0"; }
  // Finds, once, the cgroup runs would go under, where run dirs go and cordon-reaper.
  [[nodiscard]] Probe probe() const override;
  [[nodiscard]] Capabilities capabilities(const Limits& limits) const override;
  // Sweeps what a cordon that died left: its cgroups (what runs in them is killed) and
  // its run dirs, both named with its pid.
  [[nodiscard]] Result<void> prepare() override;
  [[nodiscard]] RunResult run(const RunRequest& request, const CancelToken& cancel,
                              RunObserver* observer) override;

 private:
  // Whether runs will try a cgroup first: not forced off, a writable v2 dir of ours whose
  // groups will have cgroup.kill, and no run was refused one yet. capabilities() claims
  // cgroup.kill exactly then, the helper otherwise.
  [[nodiscard]] bool uses_cgroup() const;

  // What probe() finds of the host, read once (discover()); read-only.
  struct HostFacts {
    std::optional<std::filesystem::path> cgroup_parent;  // our own v2 cgroup dir
    std::optional<std::filesystem::path> helper;         // cordon-reaper
    std::filesystem::path run_parent;                    // where run dirs go
  };
  [[nodiscard]] const HostFacts& facts() const;

  SubprocessOptions options_;
  mutable std::once_flag facts_once_;
  mutable HostFacts facts_;
  PrepareOnce prepared_;
  std::atomic<bool> cgroup_refused_{false};  // a run could not make its cgroup

  // Empty, never-killed cgroups kept for the next run: mkdir + rmdir of a cgroup is a
  // tenth of a run's cost. At most kMaxIdleCgroups; removed with the backend. Taking one
  // skips any that were removed meanwhile (an empty cgroup is anyone's to rmdir).
  [[nodiscard]] std::optional<proc::Cgroup2> take_idle_cgroup();
  void give_back_cgroup(proc::Cgroup2 cgroup);
  static constexpr std::size_t kMaxIdleCgroups = 4;
  std::mutex idle_mu_;
  std::vector<proc::Cgroup2> idle_cgroups_;
};

}  // namespace cordon::subprocess
