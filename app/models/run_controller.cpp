#include "run_controller.h"

#include <mutex>
#include <string>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/observer.h"
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
  backends_ = std::move(backends);
  shared_ = std::make_shared<Shared>();
  last_state_.clear();
  const auto history = history_path_;
  const auto shared = shared_;
  auto work = [backend, request = std::move(request), history, shared] {
    const auto started = std::chrono::system_clock::now();
    RunResult result = backend->run(request, shared->cancel.token(), shared.get());
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

}  // namespace cordon::inspector
