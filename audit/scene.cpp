#include "audit/scene.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "audit/placeholders.h"

namespace cordon::audit {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr const char* kTunable = "/proc/sys/kernel/printk_ratelimit_burst";

Status write_text(const fs::path& path, const std::string& text, fs::perms mode) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail(ErrorCode::kSystem, "cannot write " + path.string());
  std::error_code ec;
  fs::permissions(path, mode, ec);
  if (ec) return fail(ErrorCode::kSystem, "chmod " + path.string() + ": " + ec.message());
  return {};
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::uint64_t free_bytes(const char* path) {
  struct statvfs st{};
  if (::statvfs(path, &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

constexpr auto kDirMode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                          fs::perms::others_read | fs::perms::others_exec;
constexpr auto kFileMode =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;

// A decimal that `sleep` accepts and that nothing else on the host has in its argv.
std::string marker_number() {
  const std::string hex = random_hex(4);
  return "86." + std::to_string(std::stoul(hex, nullptr, 16) % 1000000);
}

}  // namespace

Result<std::unique_ptr<HostFixture>> HostFixture::create() {
  std::unique_ptr<HostFixture> f(new HostFixture());
  // The host dir sits in the host's /tmp: readable by all (0755), with a world-writable
  // w/. What must stop a sandbox from reaching it is isolation, not permission bits.
  Result<TempDir> dir = TempDir::create("cordon-audit-" + std::to_string(::getpid()) + "-", "/tmp");
  if (!dir) return std::unexpected(dir.error());
  f->host_dir_ = std::move(*dir);
  const fs::path& host = f->host_dir_.path();
  std::error_code ec;
  fs::permissions(host, kDirMode, ec);
  fs::create_directory(host / "w", ec);
  fs::permissions(host / "w", fs::perms::all, ec);
  if (ec) return fail(ErrorCode::kSystem, "audit host dir: " + ec.message());

  const std::string file_secret = "cordon-audit-file-" + random_hex(12);
  if (auto s = write_text(host / "canary.txt", file_secret + "\n", kFileMode); !s) {
    return std::unexpected(s.error());
  }
  f->keep_content_ = "cordon-audit-keep-" + random_hex(8) + "\n";
  if (auto s = write_text(host / "w" / "keep.txt", f->keep_content_, fs::perms::all); !s) {
    return std::unexpected(s.error());
  }

  // A credentials file where such files live: in the caller's home.
  const char* home = std::getenv("HOME");
  const std::string cred_secret = "cordon-audit-aws-" + random_hex(12);
  Result<TempDir> home_dir =
      TempDir::create(".cordon-audit-", home != nullptr && home[0] != '\0' ? home : "/tmp");
  if (!home_dir) home_dir = TempDir::create(".cordon-audit-", "/tmp");  // a read-only home
  if (!home_dir) return std::unexpected(home_dir.error());
  f->home_dir_ = std::move(*home_dir);
  fs::create_directory(f->home_dir_.path() / ".aws", ec);
  f->credentials_file_ = (f->home_dir_.path() / ".aws" / "credentials").string();
  if (auto s = write_text(
          f->credentials_file_,
          "[default]\naws_access_key_id = AKIAAUDIT\naws_secret_access_key = " + cred_secret + "\n",
          kFileMode);
      !s) {
    return std::unexpected(s.error());
  }

  // Set before any run starts (setenv is not safe beside threads reading the environment).
  f->env_secret_ = "cordon-audit-env-" + random_hex(12);
  ::setenv(kEnvCanaryName, f->env_secret_.c_str(), 1);
  const std::string argv_secret = "cordon-audit-holder-" + random_hex(12);
  Result<MarkedProcess> holder =
      MarkedProcess::start(argv_secret, {std::string(kEnvCanaryName) + "=" + f->env_secret_});
  if (!holder) return std::unexpected(holder.error());
  f->holder_ = std::move(*holder);

  f->secrets_ = {{"environment", f->env_secret_},
                 {"credentials file", cred_secret},
                 {"host file", file_secret},
                 {"host process argv", argv_secret}};
  return f;
}

HostFixture::~HostFixture() { ::unsetenv(kEnvCanaryName); }

Result<std::unique_ptr<Scene>> Scene::prepare(const Attempt& attempt, HostFixture& fixture) {
  std::unique_ptr<Scene> s(new Scene(attempt, fixture));
  s->marker_ = "cordon-audit-" + random_hex(6);
  const std::string number = marker_number();
  s->values_ = {{"marker", s->marker_},
                {"marker_num", number},
                {"host_dir", fixture.host_dir().string()},
                {"credentials_file", fixture.credentials_file()},
                {"secret", "cordon-audit-peer-" + random_hex(12)},
                // Not {{marker}}: the victim session's marked child is meant to live through
                // the probe, and the survivors judge would count it.
                {"session_mark", "cordon-audit-sess-" + random_hex(6)}};
  if (attempt.code.find("{{marker_num}}") != std::string::npos) {
    s->needle_ = number;
  } else if (attempt.code.find("{{marker}}") != std::string::npos) {
    s->needle_ = s->marker_;
  }
  Result<Listener> listener = fail(ErrorCode::kInternal, "no listener");
  switch (attempt.judge) {
    case Judge::kCrossSession:
      // A loopback listener only the victim session's allow-list names (sess-proxy).
      if (attempt.code.find("{{tcp_port}}") == std::string::npos) break;
      [[fallthrough]];
    case Judge::kTcpListener:
      listener = Listener::tcp_loopback();
      if (listener) s->values_["tcp_port"] = std::to_string(listener->port());
      break;
    case Judge::kUdpListener:
      listener = Listener::udp_loopback();
      if (listener) s->values_["udp_port"] = std::to_string(listener->port());
      break;
    case Judge::kAbstractUnix:
      s->values_["abstract_name"] = s->marker_;
      listener = Listener::abstract_unix(s->marker_);
      break;
    case Judge::kPathUnix:
      s->values_["unix_path"] = (fixture.host_dir() / (s->marker_ + ".sock")).string();
      listener = Listener::path_unix(fixture.host_dir() / (s->marker_ + ".sock"));
      break;
    case Judge::kVictim: {
      Result<MarkedProcess> victim = MarkedProcess::start("cordon-audit-victim-" + s->marker_, {});
      if (!victim) return std::unexpected(victim.error());
      s->victim_ = std::move(*victim);
      s->values_["victim_pid"] = std::to_string(s->victim_.pid());
      break;
    }
    case Judge::kTunable: {
      s->tunable_before_ = trimmed(read_small_file(kTunable));
      if (s->tunable_before_.empty()) return fail(ErrorCode::kUnavailable, "cannot read tunable");
      s->values_["tunable"] = kTunable;
      s->values_["tunable_value"] = std::to_string(std::stol(s->tunable_before_) + 1);
      break;
    }
    case Judge::kDisk:
      s->free_before_ = free_bytes("/tmp");
      break;
    default:
      break;
  }
  if (attempt.judge == Judge::kTcpListener || attempt.judge == Judge::kUdpListener ||
      attempt.judge == Judge::kAbstractUnix || attempt.judge == Judge::kPathUnix ||
      s->values_.contains("tcp_port")) {
    if (!listener) return std::unexpected(listener.error());
    s->listener_.emplace(std::move(*listener));
  }
  return s;
}

Result<std::string> Scene::fill(const std::string& code,
                                const std::map<std::string, std::string>& overrides) const {
  std::map<std::string, std::string> values = overrides;
  values.insert(values_.begin(), values_.end());  // keeps the overridden names as they are
  Result<std::string> filled = fill_placeholders(code, values);
  if (!filled) {
    return fail(ErrorCode::kInvalidArgument,
                "attempt " + attempt_.id + ": " + filled.error().message);
  }
  return filled;
}

std::vector<fs::path> Scene::marker_files() const {
  return {fs::path("/tmp") / marker_, fs::path("/dev/shm") / marker_,
          fs::path("/var/tmp") / marker_, fixture_.host_dir() / "w" / marker_,
          fixture_.host_dir() / (marker_ + ".sock")};
}

Evidence Scene::observe(const RunResult& run, std::string peer_output) {
  Evidence ev;
  ev.run = &run;
  ev.peer_output = std::move(peer_output);
  ev.secrets = fixture_.secrets();
  ev.secrets.emplace_back(
      attempt_.judge == Judge::kCrossSession ? "other session's" : "other run's file",
      values_.at("secret"));
  if (listener_) ev.listener_reached = listener_->reached();
  std::error_code ec;
  ev.file_created = fs::exists(fixture_.host_dir() / "w" / marker_, ec);
  ev.file_intact =
      read_small_file(fixture_.host_dir() / "w" / "keep.txt") == fixture_.keep_content();
  if (!tunable_before_.empty()) {
    ev.tunable_before = tunable_before_;
    ev.tunable_after = trimmed(read_small_file(kTunable));
  }
  if (!needle_.empty()) {
    // A backend's kill is asynchronous to the host's process table: allow it a moment.
    const auto until = std::chrono::steady_clock::now() + milliseconds(500);
    do {
      ev.survivors = host_processes_with(needle_).size();
      if (ev.survivors == 0) break;
      std::this_thread::sleep_for(milliseconds(20));
    } while (std::chrono::steady_clock::now() < until);
  }
  if (victim_.pid() > 0) {
    // SIGKILL is delivered at once but the exit is not: give a killed victim a moment.
    const auto until = std::chrono::steady_clock::now() + milliseconds(200);
    while ((ev.victim_alive = victim_.alive()) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(10));
    }
  }
  ev.process_peak = peak_;
  if (attempt_.judge == Judge::kDisk) {
    const std::uint64_t after = free_bytes("/tmp");
    ev.host_disk_drop = free_before_ > after ? free_before_ - after : 0;
    ev.host_file_bytes = fs::exists(fs::path("/tmp") / marker_, ec)
                             ? static_cast<std::uint64_t>(fs::file_size("/tmp/" + marker_, ec))
                             : 0;
  }
  return ev;
}

Scene::~Scene() {
  if (!needle_.empty()) (void)kill_host_processes_with(needle_);
  std::error_code ec;
  for (const fs::path& p : marker_files()) fs::remove(p, ec);
  if (read_small_file(fixture_.host_dir() / "w" / "keep.txt") != fixture_.keep_content()) {
    (void)write_text(fixture_.host_dir() / "w" / "keep.txt", fixture_.keep_content(),
                     fs::perms::all);
  }
  if (!tunable_before_.empty() && trimmed(read_small_file(kTunable)) != tunable_before_) {
    std::ofstream(kTunable) << tunable_before_ << "\n";
  }
}

}  // namespace cordon::audit
