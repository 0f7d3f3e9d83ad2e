// Audit: runs the escape audit on the ticked backends with the ticked attempts, off the
// GUI thread with progress per attempt (AuditController), and shows the matrix with each
// attempt's evidence. Below, the stored reports (host, backend version, policy hash,
// date): what the Tool description tab's claims are proven by; selecting one shows it.
#pragma once

#include <QWidget>

#include "backend_list.h"

class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QTreeWidget;

namespace cordon::inspector {

class AuditController;
class AuditModel;

class AuditTab : public QWidget {
  Q_OBJECT

 public:
  AuditTab(BackendListPtr backends, QWidget* parent = nullptr);

  // Ticks exactly these (available) backends / attempts.
  void check_backends(const QStringList& names);
  void check_attempts(const QStringList& ids);
  void refresh_reports();
  // The environment the ticked backends are audited in ("host" or a stored name): its
  // report is what proves that environment's tool description.
  void set_environment(const QString& name);
  // Reads the environment store again (an environment added or removed meanwhile).
  void refresh_environments();

  [[nodiscard]] const AuditModel* model() const { return model_; }
  [[nodiscard]] QTreeWidget* reports() const { return reports_; }
  [[nodiscard]] QPushButton* run_button() const { return run_; }
  [[nodiscard]] QProgressBar* progress() const { return progress_; }
  [[nodiscard]] QListWidget* attempt_list() const { return attempts_; }
  // Ticks every attempt, or none.
  void check_all_attempts(bool checked);
  [[nodiscard]] QString evidence_text() const;
  [[nodiscard]] QString status_text() const;
  [[nodiscard]] bool running() const;
  void select_row(int row);

 public slots:
  void audit();
  void cancel();

 signals:
  void audited(int stored);  // an audit finished; `stored` reports were written

 private:
  void show_report(int index);

  BackendListPtr backends_;
  EnvironmentLists environments_;
  AuditController* controller_;
  AuditModel* model_;
  QComboBox* environment_;
  QListWidget* backend_list_;
  QListWidget* attempts_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QTableView* table_;
  QPlainTextEdit* evidence_;
  QTreeWidget* reports_;
  int unticked_ = 0;  // attempts left out of the audit running: it is partial when > 0
};

}  // namespace cordon::inspector
