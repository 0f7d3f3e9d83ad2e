#include "audit_controller.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <utility>

#include "audit/runner.h"

namespace cordon::inspector {
namespace {
constexpr int kPollMs = 50;
}

// Filled by the worker thread, emptied by the GUI thread's timer.
struct AuditController::Shared {
  std::mutex mutex;
  std::vector<std::pair<QString, audit::AttemptVerdict>> pending;
  int done = 0;
  int stored = 0;
  QString error;
  std::atomic<bool> cancelled{false};
};

AuditController::AuditController(QObject* parent) : QObject(parent) {
  poll_.setInterval(kPollMs);
  connect(&poll_, &QTimer::timeout, this, &AuditController::drain);
}

AuditController::~AuditController() {
  if (running()) {
    shared_->cancelled = true;
    worker_.join();  // the attempt in progress: bounded by its timeout
  }
}

void AuditController::on_finished() {
  worker_.join();  // ended already: it invoked this slot as its last step
  poll_.stop();
  drain();
  backends_.reset();
  controls_.reset();
  int stored = 0;
  QString error;
  {
    const std::lock_guard lock(shared_->mutex);
    stored = shared_->stored;
    error = shared_->error;
  }
  emit finished(stored, error);
}

bool AuditController::running() const { return worker_.running(); }

void AuditController::cancel() {
  if (shared_) shared_->cancelled = true;
}

bool AuditController::start(BackendListPtr backends, const QStringList& names,
                            const QStringList& only, BackendListPtr controls) {
  if (running() || !backends || names.isEmpty()) return false;
  Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
  if (!catalogue) return false;
  std::vector<std::string> ids;
  for (const audit::Attempt& attempt : catalogue->attempts) {
    if (only.isEmpty() || only.contains(QString::fromStdString(attempt.id))) {
      ids.push_back(attempt.id);
    }
  }
  if (ids.size() != static_cast<std::size_t>(only.isEmpty() ? ids.size() : only.size())) {
    return false;  // an unknown id
  }
  std::vector<std::pair<QString, Backend*>> targets;
  for (const QString& name : names) {
    Backend* backend = backends->backend(name);
    if (backend == nullptr) return false;
    targets.emplace_back(name, backend);
  }
  if (!controls) controls = backends;
  Backend* control = controls->backend(QStringLiteral("subprocess"));
  backends_ = std::move(backends);
  controls_ = std::move(controls);
  shared_ = std::make_shared<Shared>();
  total_ = static_cast<int>(ids.size() * targets.size());
  const bool complete = only.isEmpty();
  const auto shared = shared_;
  worker_.start(this, "on_finished",
                [shared, targets, ids, control, complete, catalogue = std::move(*catalogue)] {
                  for (const auto& [name, backend] : targets) {
                    audit::AuditReport report = audit::start_report(*backend, catalogue, complete);
                    for (const std::string& id : ids) {
                      if (shared->cancelled) return;
                      audit::AuditOptions options;
                      options.only = {id};
                      options.control_backend = control;
                      Result<std::vector<audit::AttemptVerdict>> verdicts =
                          audit::run_attempts(*backend, catalogue, options);
                      const std::lock_guard lock(shared->mutex);
                      if (!verdicts) {
                        shared->error = QString::fromStdString(verdicts.error().describe());
                        return;
                      }
                      for (audit::AttemptVerdict& v : *verdicts) {
                        shared->pending.emplace_back(name, v);
                        report.verdicts.push_back(std::move(v));
                      }
                      ++shared->done;
                    }
                    // Like `cordon audit`: only a complete audit proves anything, so only it is
                    // stored.
                    if (complete) {
                      const Status stored = audit::store_report(report);
                      const std::lock_guard lock(shared->mutex);
                      if (stored) {
                        ++shared->stored;
                      } else {
                        shared->error = QString::fromStdString(stored.error().describe());
                      }
                    }
                  }
                });
  poll_.start();
  return true;
}

void AuditController::drain() {
  if (!shared_) return;
  std::vector<std::pair<QString, audit::AttemptVerdict>> pending;
  int done = 0;
  {
    const std::lock_guard lock(shared_->mutex);
    pending.swap(shared_->pending);
    done = shared_->done;
  }
  for (const auto& [backend, v] : pending) emit verdict(backend, v);
  emit progress(done, total_);
}

std::vector<StoredReport> stored_reports() {
  std::vector<StoredReport> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(audit::report_dir(), ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    Result<audit::AuditReport> report = audit::report_from_json(j);
    if (report) out.push_back({entry.path(), std::move(*report)});
  }
  std::ranges::sort(out, [](const StoredReport& a, const StoredReport& b) {
    return a.report.created_at > b.report.created_at;
  });
  return out;
}

}  // namespace cordon::inspector
