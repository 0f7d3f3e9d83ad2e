#include "run_controller.h"

#include <mutex>
#include <string>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/observer.h"
#include "cordon/random_hex.h"
#include "frontend/history.h"
#include "result_metatype.h"

namespace cordon::inspector {
namespace {

// What the GUI keeps of live output per stream before a drain: beyond it the live view
// shows a marker instead (the Result still has everything the backend kept).
constexpr std::size_t kPendingCap = 4u << 20;
constexpr int kPollMs = 40;

}  // namespace

// Filled by the worker thread, emptied by the GUI thread's timer.
struct RunController::Shared : RunObserver {
  std::mutex mutex;
  std::string pending[2];
  bool dropped[2] = {false, false};
  std::string state;
  std::string history_error;
  std::vector<ResourceSample> samples;
  std::optional<RunResult> result;  // set by the worker as its last step
  CancelSource cancel;

  void on_sample(const ResourceSample& sample) override {
    const std::lock_guard lock(mutex);
    samples.push_back(sample);
  }

  void on_state(RunState run_state) override {
    const std::lock_guard lock(mutex);
    state = std::string(to_string(run_state));
  }
  void on_output(Stream stream, std::string_view chunk, bool /*kept*/) override {
    const int index = stream == Stream::kStdout ? 0 : 1;
    const std::lock_guard lock(mutex);
    if (pending[index].size() + chunk.size() > kPendingCap) {
      dropped[index] = true;
      return;
    }
    pending[index].append(chunk);
  }
};

// The open session: made by the first call's worker, used by one worker at a time (a run
// is in progress only once), read by the GUI thread between runs.
struct RunController::Session {
  BackendListPtr backends;  // keeps the plugin alive for as long as the session
  QString backend;
  std::string id;
  std::int64_t calls = 0;
  // Written by the worker, read by the GUI thread after the join (between runs).
  std::chrono::steady_clock::time_point opened;
  std::chrono::steady_clock::time_point last_call_ended;
  std::unique_ptr<BackendSession> session;
};

// A call of `session`, opened first with the call's options when it is not yet: a backend
// that holds no sessions (or cannot open one) fails the call with its reason.
RunResult RunController::run_in_session(Backend& backend, Session& session,
                                        const RunRequest& request, Shared& shared) {
  if (!session.session) {
    SessionOptions options;
    options.base = request;
    Result<std::unique_ptr<BackendSession>> opened = backend.open_session(options);
    if (!opened) {
      return sandbox_error(BackendId{std::string(backend.name()), std::string(backend.version())},
                           "cannot open a session: " + opened.error().describe());
    }
    Result<std::string> id = random_hex(16);
    session.id = id ? *id : std::string(32, '0');
    session.session = std::move(*opened);
    session.opened = session.last_call_ended = std::chrono::steady_clock::now();
  }
  RunResult result = session.session->run(request, shared.cancel.token(), &shared);
  result.session = SessionCallRef{session.id, ++session.calls};
  session.last_call_ended = std::chrono::steady_clock::now();
  return result;
}

RunController::RunController(QObject* parent) : QObject(parent) {
  register_result_metatype();
  poll_.setInterval(kPollMs);
  connect(&poll_, &QTimer::timeout, this, &RunController::drain);
}

RunController::~RunController() {
  if (running()) {
    shared_->cancel.cancel();
    worker_.join();  // bounded: a cancelled run stops within its set-up bound
  }
}

void RunController::set_history_path(std::optional<std::filesystem::path> path) {
  history_path_ = std::move(path);
}

bool RunController::running() const { return worker_.running(); }

qint64 RunController::elapsed_ms() const { return elapsed_.isValid() ? elapsed_.elapsed() : 0; }

bool RunController::start(BackendListPtr backends, const QString& backend_name,
                          RunRequest request) {
  if (running() || !backends) return false;
  Backend* backend = backends->backend(backend_name);
  if (backend == nullptr) return false;
  if (session_ && (session_->backend != backend_name || session_->backends != backends)) {
    close_session();
  }
  if (keep_session_ && !session_) {
    session_ = std::make_shared<Session>();
    session_->backends = backends;
    session_->backend = backend_name;
  }
  backends_ = std::move(backends);
  shared_ = std::make_shared<Shared>();
  last_state_.clear();
  const auto history = history_path_;
  const auto shared = shared_;
  const auto session = keep_session_ ? session_ : nullptr;
  auto work = [backend, request = std::move(request), history, shared, session] {
    const auto started = std::chrono::system_clock::now();
    RunResult result;
    if (session) {
      result = run_in_session(*backend, *session, request, *shared);
    } else {
      result = backend->run(request, shared->cancel.token(), shared.get());
    }
    std::string not_recorded;
    if (history) {
      const auto recorded = history::record_run(
          *history, history::make_record(request, result, started, std::chrono::system_clock::now(),
                                         "inspector"));
      if (!recorded) not_recorded = recorded.error().describe();
    }
    const std::lock_guard lock(shared->mutex);
    shared->history_error = std::move(not_recorded);
    shared->result = std::move(result);
  };
  worker_.start(this, "on_finished", std::move(work));
  elapsed_.start();
  poll_.start();
  return true;
}

void RunController::cancel() {
  if (shared_) shared_->cancel.cancel();
}

void RunController::drain() {
  if (!shared_) return;
  std::string chunks[2];
  bool dropped[2] = {false, false};
  std::string state;
  std::vector<ResourceSample> samples;
  {
    const std::lock_guard lock(shared_->mutex);
    samples.swap(shared_->samples);
    for (int i = 0; i < 2; ++i) {
      chunks[i].swap(shared_->pending[i]);
      dropped[i] = shared_->dropped[i];
      shared_->dropped[i] = false;
    }
    state = shared_->state;
  }
  if (QString::fromStdString(state) != last_state_) {
    last_state_ = QString::fromStdString(state);
    emit state_changed(last_state_);
  }
  for (int i = 0; i < 2; ++i) {
    if (!chunks[i].empty()) {
      emit output(i, QByteArray(chunks[i].data(), static_cast<qsizetype>(chunks[i].size())));
    }
    if (dropped[i]) emit output(i, QByteArrayLiteral("\n[live view skipped output]\n"));
  }
  for (const ResourceSample& s : samples) {
    emit sample(s.elapsed.count(), s.memory_bytes ? qint64(*s.memory_bytes) : -1,
                s.cpu_usec ? qint64(*s.cpu_usec) : -1);
  }
  emit tick(elapsed_ms());
}

void RunController::on_finished() {
  worker_.join();  // ended already: it invoked this slot as its last step
  poll_.stop();
  drain();
  RunResult result;
  std::string not_recorded;
  {
    const std::lock_guard lock(shared_->mutex);
    if (shared_->result) result = std::move(*shared_->result);
    not_recorded = shared_->history_error;
  }
  backends_.reset();
  if (!not_recorded.empty()) emit history_error(QString::fromStdString(not_recorded));
  emit finished(result);
}

void RunController::set_keep_session(bool keep) {
  keep_session_ = keep;
  if (!keep) close_session();
}

QString RunController::session_id() const {
  return session_ ? QString::fromStdString(session_->id) : QString();
}

qint64 RunController::session_calls() const { return session_ ? session_->calls : 0; }

QString RunController::session_backend() const {
  return session_ && session_->session ? session_->backend : QString();
}

QString RunController::session_environment() const {
  return session_ && session_->session
             ? QString::fromStdString(session_->backends->environment().name)
             : QString();
}

std::optional<frontend::SessionInfo> RunController::session_info() {
  if (!session_ || !session_->session || running()) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  frontend::SessionInfo info;
  info.id = session_->id;
  info.backend = session_->backend.toStdString();
  info.environment = session_->backends->environment().name;
  info.age = std::chrono::duration_cast<std::chrono::milliseconds>(now - session_->opened);
  info.idle =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - session_->last_call_ended);
  info.calls = session_->calls;
  info.stats = session_->session->stats();
  return info;
}

Status RunController::reset_session() {
  if (!session_ || !session_->session) {
    return fail(ErrorCode::kInvalidArgument, "no session is open");
  }
  Status done = session_->session->reset();
  return done;
}

void RunController::close_session() {
  if (running()) return;  // the worker uses it; closed once its run ends
  session_.reset();
}

std::vector<WorkspaceEntry> RunController::session_files() {
  if (!session_ || !session_->session || running()) return {};
  return session_->session->list_files("").value_or(std::vector<WorkspaceEntry>{});
}

}  // namespace cordon::inspector
