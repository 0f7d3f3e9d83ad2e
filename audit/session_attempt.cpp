#include "audit/session_attempt.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/session.h"

namespace cordon::audit {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kPeerReady = "cordon-audit-peer-ok\n";
constexpr std::string_view kPeerOutputFollows = "cordon-audit-peer-output-follows";
constexpr std::string_view kPeerEnded = "cordon-audit-peer-ended";
// The victim's call plants before it says it is ready; python's start on a loaded machine
// and a gVisor sandbox's first process take seconds.
constexpr milliseconds kPeerStartBound{20000};
// Long enough for the victim to see what the probe did (it looks every 20 ms).
constexpr milliseconds kPeerLook{300};
// The victim's call ends on its own after 30 s (its code); the host ends it earlier.
constexpr milliseconds kPeerTimeout{40000};

// Watches the victim's stdout for its ready line; also knows when its call returned.
class PeerWatch final : public RunObserver {
 public:
  void on_output(Stream stream, std::string_view chunk, bool /*kept*/) override {
    if (stream != Stream::kStdout) return;
    const std::scoped_lock lock(mutex_);
    seen_.append(chunk);
    if (seen_.find(kPeerReady) != std::string::npos) changed_.notify_all();
  }
  void finished() {
    const std::scoped_lock lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  }
  // Whether the victim said it is ready (false: it ended or did not say so in time).
  bool wait_ready() {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, kPeerStartBound,
                      [this] { return finished_ || seen_.find(kPeerReady) != std::string::npos; });
    return seen_.find(kPeerReady) != std::string::npos;
  }
  bool has_finished() {
    const std::scoped_lock lock(mutex_);
    return finished_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string seen_;
  bool finished_ = false;
};

// The attacker's session (`victim` false) or the victim's, which the control's one session
// is too.
RunRequest base_of(const SessionAttack& a, bool victim) {
  RunRequest base = a.base;
  if (victim) base.network = a.peer_network;
  return base;
}

SessionOptions options_for(const SessionAttack& a, bool victim) {
  SessionOptions options;
  options.base = base_of(a, victim);
  options.base.code.clear();
  return options;
}

RunRequest call_of(const SessionAttack& a, bool victim, std::string code, milliseconds timeout) {
  RunRequest request = base_of(a, victim);
  request.code = std::move(code);
  request.timeout = timeout;
  return request;
}

bool file_intact(BackendSession& victim, const SessionAttack& a) {
  const Result<std::string> content = victim.read_file(a.mark, a.secret.size() + 64);
  return content && *content == a.secret;
}

// `text` as a python string literal (a JSON string is one).
std::string py_literal(const std::string& text) { return nlohmann::json(text).dump(); }

}  // namespace

Result<SessionRuns> run_across_sessions(Backend& backend, const SessionAttack& a) {
  Result<std::unique_ptr<BackendSession>> victim = backend.open_session(options_for(a, true));
  if (!victim) return std::unexpected(victim.error());
  Result<std::unique_ptr<BackendSession>> attacker = backend.open_session(options_for(a, false));
  if (!attacker) return std::unexpected(attacker.error());

  SessionRuns out;
  PeerWatch watch;
  CancelSource stop_peer;
  RunResult peer_result;
  std::thread peer([&] {
    peer_result =
        (*victim)->run(call_of(a, true, a.peer_code, kPeerTimeout), stop_peer.token(), &watch);
    watch.finished();
  });
  if (watch.wait_ready()) {
    out.attack =
        (*attacker)->run(call_of(a, false, a.probe_code, a.base.timeout), CancelToken{}, nullptr);
    std::this_thread::sleep_for(kPeerLook);
    out.peer_ended = watch.has_finished();
  } else {
    out.attack.outcome = Outcome::kSandboxError;
    out.attack.error = "the other session's call did not get ready";
  }
  stop_peer.cancel();
  peer.join();
  out.peer_output = peer_result.stdout_data + peer_result.stderr_data;
  if (peer_result.error) out.peer_output += *peer_result.error;
  out.peer_file_intact = file_intact(**victim, a);
  return out;
}

Result<SessionRuns> run_in_one_session(Backend& backend, const SessionAttack& a) {
  Result<std::unique_ptr<BackendSession>> session = backend.open_session(options_for(a, true));
  if (!session) return std::unexpected(session.error());
  // The peer as a child of the call, the probe in the call's own process once the peer's
  // file is there; then the peer's output after a separator line.
  const std::string wrapper =
      "import os, subprocess, sys, time\n"
      "_peer = subprocess.Popen([sys.executable, '-c', " +
      py_literal(a.peer_code) +
      "],\n"
      "                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
      "_ready = os.path.join(os.getcwd(), " +
      py_literal(a.mark) +
      ")\n"
      "_until = time.time() + " +
      std::to_string(kPeerStartBound.count() / 1000) +
      "\n"
      "while time.time() < _until:\n"
      "    try:\n"
      "        with open(_ready) as _f:\n"
      "            if _f.read() == " +
      py_literal(a.secret) +
      ":\n"
      "                break\n"
      "    except OSError:\n"
      "        pass\n"
      "    time.sleep(0.02)\n"
      "try:\n"
      "    exec(compile(" +
      py_literal(a.probe_code) +
      ", '<probe>', 'exec'), {'__name__': '__main__'})\n"
      "finally:\n"
      "    time.sleep(" +
      std::to_string(kPeerLook.count() / 1000.0) +
      ")\n"
      "    _ended = _peer.poll() is not None\n"
      "    _peer.kill()\n"
      "    _out = _peer.communicate()[0].decode(errors='replace')\n"
      "    print('\\n" +
      std::string(kPeerOutputFollows) +
      "', flush=True)\n"
      "    print(_out)\n"
      "    if _ended:\n"
      "        print('" +
      std::string(kPeerEnded) + "')\n";
  SessionRuns out;
  out.attack = (*session)->run(call_of(a, true, wrapper, kPeerTimeout), CancelToken{}, nullptr);
  const std::size_t cut = out.attack.stdout_data.rfind(kPeerOutputFollows);
  if (cut != std::string::npos) {
    out.peer_output = out.attack.stdout_data.substr(cut + kPeerOutputFollows.size());
    out.attack.stdout_data.resize(cut);
    out.peer_ended = out.peer_output.find(kPeerEnded) != std::string::npos;
  }
  out.peer_file_intact = file_intact(**session, a);
  return out;
}

}  // namespace cordon::audit
