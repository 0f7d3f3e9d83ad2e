// A backend for the loader's tests, a C++ Backend served through cordon/plugin_export.h as
// the in-tree plugins are. It counts its creations in an exported variable so a test can
// prove that listing plugins never creates a backend, records the options it was given,
// and refuses one: a runtime other than "fixture-runtime". Its run hands back what it got
// across the boundary so the test can see it arrive unchanged: stdout is the code's bytes,
// stderr the stdin, each input file an artifact, exit_code the timeout in ms; it reports
// a state, the output and a sample to the observer; code "wait-for-cancel" waits (10 s at
// most) for the cancel token. It counts its prepare() calls too; with the image option
// "fail-prepare" its prepare fails, and so does each run, with the reason. It holds
// sessions (FixtureSession) except as its "alt" variant.
#include <poll.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "cordon/backend.h"
#include "cordon/plugin_export.h"
#include "cordon/sha256.h"

extern "C" {
__attribute__((visibility("default"))) int cordon_fixture_create_calls = 0;
__attribute__((visibility("default"))) long long cordon_fixture_last_pool_size = -2;
__attribute__((visibility("default"))) char cordon_fixture_last_engine[64] = "";
__attribute__((visibility("default"))) int cordon_fixture_prepare_calls = 0;
}

namespace {

// A session of the fixture: it counts its calls (the "state" a call sees), keeps files in
// memory, and answers each operation so that a test sees what crossed.
class FixtureSession final : public cordon::BackendSession {
 public:
  explicit FixtureSession(cordon::SessionOptions options) : options_(std::move(options)) {}
  cordon::RunResult run(const cordon::RunRequest& request, const cordon::CancelToken& cancel,
                        cordon::RunObserver* observer) override {
    ++calls_;
    if (observer != nullptr) observer->on_output(cordon::Stream::kStdout, request.code, true);
    cordon::RunResult result;
    result.backend = {"fixture", FIXTURE_VERSION};
    // "hold:MS": a call that runs MS milliseconds unless cancelled first.
    if (request.code.starts_with("hold:")) {
      pollfd p{cancel.wait_fd(), POLLIN, 0};
      const int ms = std::stoi(request.code.substr(5));
      if (p.fd >= 0 ? ::poll(&p, 1, ms) == 1 : (::poll(nullptr, 0, ms), false)) {
        result.outcome = cordon::Outcome::kCancelled;
        return result;
      }
    }
    result.outcome = cordon::Outcome::kOk;
    result.exit_code = 0;
    // What the call saw: its index, the session's language, and its own code.
    result.stdout_data = std::to_string(calls_) + " " +
                         std::string(cordon::to_string(options_.base.language)) + " " +
                         request.code;
    result.value = "'" + request.code + "'";
    // "where": the address of the request this call was given, which is the caller's own
    // object only when the call did not cross as JSON (PluginRegistry's SessionCalls).
    if (request.code == "where") {
      result.value = std::to_string(reinterpret_cast<std::uintptr_t>(&request));
    }
    result.state_lost = request.code == "lose";
    return result;
  }
  cordon::Status reset() override {
    calls_ = 0;
    return {};
  }
  cordon::SessionStats stats() override {
    return cordon::SessionStats{
        .calls = calls_,
        .memory_kb = 1234,
        .workspace_bytes = static_cast<std::int64_t>(options_.workspace_bytes),
        .cpu_ms = 56,
        .interpreter_alive = calls_ > 0};
  }
  cordon::Result<std::vector<cordon::WorkspaceEntry>> list_files(std::string_view dir) override {
    if (dir == "..") return cordon::fail(cordon::ErrorCode::kInvalidArgument, "outside");
    std::vector<cordon::WorkspaceEntry> out;
    for (const auto& [path, bytes] : files_) out.push_back({path, false, bytes.size()});
    return out;
  }
  cordon::Result<std::string> read_file(std::string_view path, std::uint64_t max_bytes) override {
    const auto found = files_.find(std::string(path));
    if (found == files_.end()) {
      return cordon::fail(cordon::ErrorCode::kNotFound, "no file " + std::string(path));
    }
    if (found->second.size() > max_bytes) {
      return cordon::fail(cordon::ErrorCode::kInvalidArgument, "too large");
    }
    return found->second;
  }
  cordon::Status write_file(std::string_view path, std::string_view bytes) override {
    files_[std::string(path)] = std::string(bytes);
    return {};
  }

 private:
  cordon::SessionOptions options_;
  std::int64_t calls_ = 0;
  std::map<std::string, std::string> files_;
};

class FixtureBackend final : public cordon::Backend {
 public:
  FixtureBackend(bool fail_prepare, bool alt) : fail_prepare_(fail_prepare), alt_(alt) {}
  std::string_view name() const override { return "fixture"; }
  std::string_view version() const override { return FIXTURE_VERSION; }
  // Made with --runtime fixture-runtime it is the variant "alt"; the plain one offers it, as
  // the container backend offers gVisor (issue #18).
  std::string variant() const override { return alt_ ? "alt" : ""; }
  cordon::Probe probe() const override {
    cordon::Probe out{true, "fixture probe"};
    out.variant = variant();
    if (!alt_) out.variants = {{.label = "alt", .runtime = "fixture-runtime"}};
    return out;
  }
  cordon::Capabilities capabilities(const cordon::Limits& limits) const override {
    cordon::Capabilities caps;
    for (const cordon::Aspect aspect : cordon::kAllAspects) {
      caps.aspects.push_back(cordon::capability(aspect, cordon::Enforcement::kNone, "", {}, ""));
    }
    // Memory: the asked value, so a test sees the limits cross.
    caps.aspects[5] = cordon::capability(
        cordon::Aspect::kMemory, cordon::Enforcement::kEnforced, "fixture",
        limits.memory_bytes ? std::optional(std::to_string(*limits.memory_bytes)) : std::nullopt,
        "all of it", cordon::LimitRange{4096, 1u << 30});
    caps.aspects[9] = cordon::capability(cordon::Aspect::kOutput, cordon::Enforcement::kEnforced,
                                         "fixture cap", "1 MiB", "", cordon::LimitRange{});
    caps.aspects[10] = cordon::capability(cordon::Aspect::kTimeout, cordon::Enforcement::kEnforced,
                                          "fixture clock", "5 s", "");
    return caps;
  }
  cordon::Result<void> prepare() override {
    return prepared_([this]() -> cordon::Result<void> {
      ++cordon_fixture_prepare_calls;
      if (fail_prepare_) return cordon::fail(cordon::ErrorCode::kUnavailable, "fixture refuses");
      return {};
    });
  }
  // Sessions, except on the "alt" variant, which refuses them as Backend does by default.
  cordon::Result<std::unique_ptr<cordon::BackendSession>> open_session(
      const cordon::SessionOptions& options) override {
    if (alt_) return Backend::open_session(options);
    if (options.workspace_bytes == 0) {
      return cordon::fail(cordon::ErrorCode::kInvalidArgument, "a workspace of 0 bytes");
    }
    return std::make_unique<FixtureSession>(options);
  }
  cordon::RunResult run(const cordon::RunRequest& request, const cordon::CancelToken& cancel,
                        cordon::RunObserver* observer) override {
    if (auto st = prepare(); !st) {
      return cordon::sandbox_error({"fixture", FIXTURE_VERSION}, st.error().describe());
    }
    cordon::RunResult result;
    result.backend = {"fixture", FIXTURE_VERSION};
    if (observer != nullptr) {
      observer->on_state(cordon::RunState::kRunning);
      observer->on_output(cordon::Stream::kStdout, request.code, true);
      observer->on_sample({std::chrono::milliseconds(7), 4096, std::nullopt});
    }
    if (request.code == "wait-for-cancel") {
      pollfd p{cancel.wait_fd(), POLLIN, 0};
      const bool woken = p.fd >= 0 && ::poll(&p, 1, /*timeout=*/10000) == 1;
      result.outcome =
          woken && cancel.cancelled() ? cordon::Outcome::kCancelled : cordon::Outcome::kFailed;
      return result;
    }
    result.outcome = cordon::Outcome::kOk;
    result.exit_code = static_cast<int>(request.timeout.count());
    result.stdout_data = request.code;
    result.stderr_data = request.stdin_data.value_or("(no stdin)");
    result.cpu_ms = 12;
    result.enforced.push_back({cordon::Aspect::kMemory, "fixture", std::nullopt});
    for (const auto& [path, content] : request.input_files) {
      result.artifacts.push_back({path, content.size(), cordon::sha256_hex(content), content});
    }
    return result;
  }

 private:
  bool fail_prepare_;
  bool alt_;
  cordon::PrepareOnce prepared_;
};

cordon::Result<cordon::Backend*> make_backend(const cordon::BackendOptions& options) {
  ++cordon_fixture_create_calls;
  cordon_fixture_last_pool_size =
      options.pool_size ? static_cast<long long>(*options.pool_size) : -1;
  const std::string engine = options.engine.value_or("(unset)");
  std::strncpy(cordon_fixture_last_engine, engine.c_str(), sizeof(cordon_fixture_last_engine) - 1);
  if (options.runtime && *options.runtime != "fixture-runtime") {
    return cordon::fail(cordon::ErrorCode::kInvalidArgument,
                        "--runtime " + *options.runtime + ": only fixture-runtime is supported");
  }
  return new FixtureBackend(options.image == "fail-prepare", options.runtime.has_value());
}

}  // namespace

CORDON_EXPORT_BACKEND("fixture", FIXTURE_VERSION, make_backend)
