// What the audit plants on the host, and what it looks at after each run.
//
// HostFixture lives for a whole audit: a host dir outside any sandbox with a canary file
// and a world-writable subdir, a ~/.aws/credentials-style file in the caller's home, a
// canary in the audit's own environment, and a host process holding that canary in its
// environment and another in its argv. Scene lives for one run of one attempt: the
// listener, victim, marker and tunable it needs, the placeholders of its code, and the
// evidence afterwards. Both undo everything they did when they go away.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/catalogue.h"
#include "audit/host_probes.h"
#include "audit/verdict.h"
#include "cordon/temp_dir.h"

namespace cordon::audit {

inline constexpr const char* kEnvCanaryName = "CORDON_AUDIT_CANARY";

class HostFixture {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HostFixture>> create();
  HostFixture(const HostFixture&) = delete;
  HostFixture& operator=(const HostFixture&) = delete;
  ~HostFixture();

  [[nodiscard]] const std::filesystem::path& host_dir() const { return host_dir_.path(); }
  [[nodiscard]] const std::string& credentials_file() const { return credentials_file_; }
  [[nodiscard]] const std::string& env_secret() const { return env_secret_; }
  // name -> value of every secret planted, for the canary judge.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& secrets() const {
    return secrets_;
  }
  [[nodiscard]] const std::string& keep_content() const { return keep_content_; }

 private:
  HostFixture() = default;
  TempDir host_dir_;
  TempDir home_dir_;
  std::string credentials_file_;
  std::string env_secret_;
  std::string keep_content_;
  MarkedProcess holder_;
  std::vector<std::pair<std::string, std::string>> secrets_;
};

class Scene {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Scene>> prepare(const Attempt& attempt,
                                                              HostFixture& fixture);
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;
  ~Scene();

  // `code` with every {{placeholder}} filled, `overrides` before the scene's own values
  // (a control pointing the probe at another target); fails on an unknown one.
  [[nodiscard]] Result<std::string> fill(
      const std::string& code, const std::map<std::string, std::string>& overrides = {}) const;
  // A placeholder's value ("secret", "session_mark", ...); empty when it has none.
  [[nodiscard]] std::string value(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? std::string() : it->second;
  }
  // The host's view after the run (waits briefly for the run's processes to be gone).
  [[nodiscard]] Evidence observe(const RunResult& run, std::string peer_output);
  // What the process-table sampler looks for during the run ("" = nothing).
  [[nodiscard]] const std::string& process_needle() const { return needle_; }
  void record_process_count(std::size_t count) { peak_ = std::max(peak_, count); }

 private:
  Scene(const Attempt& attempt, HostFixture& fixture) : attempt_(attempt), fixture_(fixture) {}
  [[nodiscard]] std::vector<std::filesystem::path> marker_files() const;

  const Attempt& attempt_;
  HostFixture& fixture_;
  std::map<std::string, std::string> values_;
  std::string marker_;
  std::string needle_;
  std::optional<Listener> listener_;
  MarkedProcess victim_;
  std::string tunable_before_;
  std::uint64_t free_before_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace cordon::audit
