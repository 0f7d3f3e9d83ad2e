#include "session_holder.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cordon/cancel.h"
#include "cordon/plugin_wire.h"
#include "cordon/result_json.h"
#include "cordon/session_wire.h"
#include "cordon/units.h"
#include "session_protocol.h"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// How long one request may take to arrive, or its answer to leave: a client that connects
// and says nothing must not hold the holder.
constexpr std::chrono::seconds kRequestBound{10};

std::int64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The peer's uid is ours (SO_PEERCRED): root's other processes aside, nobody else's
// `cordon` reaches this session.
bool peer_is_us(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  return cred.uid == ::geteuid();
}

// A request that arrived while a call ran, to be served after it.
struct Pending {
  UniqueFd client;
  json request;
};

// Calls that may wait behind the running one (as the MCP server's sessions allow).
constexpr std::size_t kMaxWaiting = 4;

// While a call runs, on a thread of its own: cancels the call when its client hangs up
// (Ctrl-C in `cordon session run`), and keeps the session's socket answering, since a
// holder that only listens between calls leaves `cordon session ls` and `stop` hanging
// behind a long call: `info` is answered at once (busy, the figures of before the call),
// `stop` at once (the call is cancelled and the session ends after it), anything else
// waits in `queue` for its turn, at most kMaxWaiting (over it refused as busy).
class CallWatch {
 public:
  CallWatch(int client, int listener, CancelSource& cancel, json busy_info,
            std::deque<Pending>& queue, bool& stop_asked)
      : thread_(
            [this, client, listener, &cancel, info = std::move(busy_info), &queue, &stop_asked] {
              for (;;) {
                pollfd pfd[3] = {{client, POLLRDHUP, 0},
                                 {stop_.token().wait_fd(), POLLIN, 0},
                                 {listener, POLLIN, 0}};
                if (::poll(pfd, 3, -1) < 0) {
                  if (errno == EINTR) continue;
                  return;
                }
                if (pfd[1].revents != 0) return;
                if ((pfd[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
                  cancel.cancel();
                  return;
                }
                if ((pfd[2].revents & POLLIN) != 0) {
                  take(listener, cancel, info, queue, stop_asked);
                }
              }
            }) {}
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;
  ~CallWatch() {
    stop_.cancel();
    thread_.join();
  }

 private:
  static void take(int listener, CancelSource& cancel, const json& info, std::deque<Pending>& queue,
                   bool& stop_asked) {
    UniqueFd peer(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (!peer || !peer_is_us(peer.get())) return;
    Result<json> request = read_frame(peer.get(), Clock::now() + kRequestBound);
    if (!request) return;
    const Result<HolderOp> op = holder_op(*request);
    if (op && *op == HolderOp::kInfo) {
      (void)write_frame(peer.get(), json{{"info", info}}, Clock::now() + kRequestBound);
    } else if (op && *op == HolderOp::kStop) {
      stop_asked = true;
      cancel.cancel();
      (void)write_frame(peer.get(), json{{"ok", json::object()}}, Clock::now() + kRequestBound);
    } else if (queue.size() < kMaxWaiting) {
      queue.push_back({std::move(peer), std::move(*request)});
    } else {
      (void)write_frame(peer.get(),
                        wire::session_error_answer(Error{ErrorCode::kUnavailable, 0,
                                                         "the session is busy: a call runs and " +
                                                             std::to_string(kMaxWaiting) +
                                                             " more wait, the most that may"}),
                        Clock::now() + kRequestBound);
    }
  }

  CancelSource stop_;
  std::thread thread_;
};

class Holder {
 public:
  Holder(BackendSession& session, const HolderIdentity& identity, int listener)
      : session_(session),
        identity_(identity),
        listener_(listener),
        started_(Clock::now()),
        started_wall_(std::chrono::system_clock::now()),
        last_(started_),
        last_wall_(started_wall_) {}

  // The reason the session ended, once it did.
  [[nodiscard]] const std::optional<std::string>& ended() const { return ended_; }

  // Until the next deadline (idle or max age).
  [[nodiscard]] Clock::time_point next_deadline() const {
    return std::min(last_ + identity_.idle, started_ + identity_.max_age);
  }
  void check_deadlines() {
    const Clock::time_point now = Clock::now();
    if (now >= started_ + identity_.max_age) {
      ended_ = "ended at its maximum age of " + format_duration(identity_.max_age);
    } else if (now >= last_ + identity_.idle) {
      ended_ = "ended after " + format_duration(identity_.idle) + " idle";
    }
  }

  void serve(int fd) {
    const auto until = Clock::now() + kRequestBound;
    Result<json> request = read_frame(fd, until);
    if (!request) return;  // nothing to answer: the client is gone or garbled
    answer(fd, *request);
    // What arrived while a call ran, in its order (a queued run may queue more).
    while (!waiting_.empty()) {
      Pending next = std::move(waiting_.front());
      waiting_.pop_front();
      if (ended_) {
        (void)write_frame(next.client.get(),
                          wire::session_error_answer(Error{
                              ErrorCode::kNotFound, 0, "session " + identity_.id + " " + *ended_}),
                          Clock::now() + kRequestBound);
      } else {
        answer(next.client.get(), next.request);
      }
    }
  }

 private:
  void answer(int fd, const json& request) {
    Result<HolderOp> op = holder_op(request);
    if (!op) {
      (void)write_frame(fd, wire::session_error_answer(op.error()), Clock::now() + kRequestBound);
      return;
    }
    json reply;
    switch (*op) {
      case HolderOp::kRun:
        reply = run(fd, request);
        break;
      case HolderOp::kInfo:
        reply = json{{"info", info()}};
        break;
      case HolderOp::kStop:
        ended_ = "was stopped (cordon session stop)";
        reply = json{{"ok", json::object()}};
        break;
      default:
        touch();
        reply = wire::serve_session_call(session_, request);
        break;
    }
    (void)write_frame(fd, reply, Clock::now() + kRequestBound);
  }

  void touch() {
    last_ = Clock::now();
    last_wall_ = std::chrono::system_clock::now();
  }

  json run(int fd, const json& request) {
    const auto member = request.find("request");
    Result<RunRequest> call = member == request.end()
                                  ? fail(ErrorCode::kInvalidArgument, "a run has a 'request'")
                                  : wire::request_from_json(*member);
    if (!call) return wire::session_error_answer(call.error());
    if (request.value("session_language", false)) {
      call->language = parse_language(identity_.language).value_or(call->language);
    }
    CancelSource cancel;
    RunResult result;
    bool stop_asked = false;
    {
      json busy = info();
      busy["busy"] = true;
      const CallWatch watch(fd, listener_, cancel, std::move(busy), waiting_, stop_asked);
      result = session_.run(*call, cancel.token(), nullptr);
    }
    if (stop_asked) ended_ = "was stopped (cordon session stop)";
    // A session whose sandbox died ends with this call, saying why (the holder then exits).
    if (const std::optional<SessionLoss> loss = session_.loss(); loss && !ended_) {
      ended_ = loss->words();
    }
    ++calls_;
    touch();  // idle counts from a call's end
    result.session = SessionCallRef{identity_.id, calls_};
    json out = to_json(result);
    with_raw_output(result, out);
    // The language the call ran in, for the caller's history (the session's, unless it
    // named one).
    json answer{{"result", std::move(out)},
                {"session_language", std::string(to_string(call->language))}};
    return answer;
  }

  json info() {
    const SessionStats stats = session_.stats();
    const auto figure = [](const std::optional<std::int64_t>& v) {
      return v ? json(*v) : json(nullptr);
    };
    return json{{"id", identity_.id},
                {"pid", ::getpid()},
                {"backend", identity_.backend},
                {"language", identity_.language},
                {"environment", identity_.environment},
                {"started_ms", epoch_ms(started_wall_)},
                {"last_call_ms", epoch_ms(last_wall_)},
                {"calls", calls_},
                {"memory_kb", figure(stats.memory_kb)},
                {"workspace_bytes", figure(stats.workspace_bytes)},
                {"cpu_ms", figure(stats.cpu_ms)},
                {"interpreter_alive", stats.interpreter_alive},
                {"idle_ms", identity_.idle.count()},
                {"max_age_ms", identity_.max_age.count()}};
  }

  BackendSession& session_;
  const HolderIdentity& identity_;
  int listener_;
  std::deque<Pending> waiting_;
  Clock::time_point started_;
  std::chrono::system_clock::time_point started_wall_;
  Clock::time_point last_;
  std::chrono::system_clock::time_point last_wall_;
  std::int64_t calls_ = 0;
  std::optional<std::string> ended_;
};

}  // namespace

Result<fs::path> session_dir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  fs::path dir = runtime != nullptr && runtime[0] == '/'
                     ? fs::path(runtime) / "cordon-sessions"
                     : fs::path("/tmp") / ("cordon-sessions-" + std::to_string(::geteuid()));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail_errno("make " + dir.string());
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return fail_errno("stat " + dir.string());
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return fail(ErrorCode::kUnavailable,
                dir.string() +
                    " is not a directory of ours that only we may enter (mode 0700); "
                    "remove it or set XDG_RUNTIME_DIR");
  }
  return dir;
}

bool valid_session_id(std::string_view id) {
  if (id.size() != 32) return false;
  for (const char c : id) {
    const bool digit = c >= '0' && c <= '9';
    const bool hex_letter = c >= 'a' && c <= 'f';
    if (!digit && !hex_letter) return false;
  }
  return true;
}

fs::path session_socket(const fs::path& dir, std::string_view id) {
  return dir / (std::string(id) + ".sock");
}

fs::path session_end_note(const fs::path& dir, std::string_view id) {
  return dir / (std::string(id) + ".ended");
}

Result<sockaddr_un> socket_address(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof addr.sun_path) {
    return fail(ErrorCode::kInvalidArgument, "the session socket's path is too long: " + p);
  }
  std::copy(p.begin(), p.end(), addr.sun_path);
  return addr;
}

Result<UniqueFd> listen_at(const fs::path& path) {
  Result<sockaddr_un> address = socket_address(path);
  if (!address) return std::unexpected(address.error());
  const sockaddr_un& addr = *address;
  const std::string p = path.string();
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno("socket");
  // Bound 0600: the directory (0700) already keeps others out; this is a second fence.
  const mode_t old = ::umask(0177);
  const int bound = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (bound != 0) return fail_errno("bind " + p);
  if (::listen(fd.get(), 16) != 0) return fail_errno("listen " + p);
  return fd;
}

void serve_session(BackendSession& session, const HolderIdentity& identity, UniqueFd listener,
                   const fs::path& dir) {
  Holder holder(session, identity, listener.get());
  while (!holder.ended()) {
    pollfd pfd{listener.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, poll_ms_until(holder.next_deadline()));
    if (ready < 0 && errno != EINTR) {
      break;
    }
    if (ready > 0) {
      UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (client && peer_is_us(client.get())) holder.serve(client.get());
    }
    if (!holder.ended()) holder.check_deadlines();
  }
  {
    std::ofstream note(session_end_note(dir, identity.id), std::ios::trunc);
    note << holder.ended().value_or("ended: its holder failed") << "\n";
  }
  std::error_code ec;
  fs::remove(session_socket(dir, identity.id), ec);
}

}  // namespace cordon::cli
