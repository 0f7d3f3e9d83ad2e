// The thin adapter between the GUI and the escape audit (audit::run_attempts): the audit
// runs on a worker thread (WorkerThread), one attempt at a time so progress is per attempt
// and Cancel takes effect between attempts; verdicts reach the GUI thread through a timer
// drain, as RunController does with output. A complete audit (every attempt) is stored
// like `cordon audit` stores it, so the Tool description tab can state what it proves.
// The core runner decides what may run: an attempt that would act on the host is SKIPPED
// on a backend that does not claim to stop it (subprocess).
#pragma once

#include <QObject>
#include <QStringList>
#include <QTimer>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "audit/report.h"
#include "backend_list.h"
#include "worker_thread.h"

namespace cordon::inspector {

class AuditController : public QObject {
  Q_OBJECT

 public:
  explicit AuditController(QObject* parent = nullptr);
  ~AuditController() override;  // cancels and waits for the attempt in progress
  AuditController(const AuditController&) = delete;
  AuditController& operator=(const AuditController&) = delete;

  // Audits `backends` (in order) with the attempts `only` (ids; empty: every attempt).
  // False when an audit is running, a backend is unavailable or an id is unknown. The
  // positive controls run on `controls`' subprocess backend (on the host), `backends`' when
  // null: a list made for an environment has none (subprocess cannot show one).
  bool start(BackendListPtr backends, const QStringList& names, const QStringList& only,
             BackendListPtr controls = nullptr);
  void cancel();
  [[nodiscard]] bool running() const;

 signals:
  void verdict(const QString& backend, const cordon::audit::AttemptVerdict& verdict);
  void progress(int done, int total);
  // Every backend done (or cancelled). `stored`: reports written; `error`: why the audit
  // stopped early, empty when it did not.
  void finished(int stored, const QString& error);

 private slots:
  void on_finished();  // the worker's done slot (WorkerThread)

 private:
  void drain();

  struct Shared;
  std::shared_ptr<Shared> shared_;
  BackendListPtr backends_;
  BackendListPtr controls_;
  QTimer poll_;
  int total_ = 0;
  WorkerThread worker_;  // last: joined before the members above go
};

// A stored report and its file, for the list of what descriptions are proven by.
struct StoredReport {
  std::filesystem::path path;
  audit::AuditReport report;
};
// Every readable report in audit::report_dir(), newest first.
[[nodiscard]] std::vector<StoredReport> stored_reports();

}  // namespace cordon::inspector
