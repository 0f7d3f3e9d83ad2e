#include "audit_tab.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "audit/catalogue.h"
#include "audit_controller.h"
#include "audit_model.h"
#include "run_tab.h"

namespace cordon::inspector {
namespace {

QStringList checked(const QListWidget* list) {
  QStringList out;
  for (int i = 0; i < list->count(); ++i) {
    if (list->item(i)->checkState() == Qt::Checked)
      out << list->item(i)->data(Qt::UserRole).toString();
  }
  return out;
}

void check_only(QListWidget* list, const QStringList& names) {
  for (int i = 0; i < list->count(); ++i) {
    QListWidgetItem* item = list->item(i);
    if (item->flags() & Qt::ItemIsUserCheckable) {
      item->setCheckState(names.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked
                                                                              : Qt::Unchecked);
    }
  }
}

QString short_hash(const std::string& hash) {
  return QString::fromStdString(hash).left(19);  // "sha256:" and 12 hex digits
}

}  // namespace

AuditTab::AuditTab(BackendListPtr backends, QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      environments_(backends_),
      controller_(new AuditController(this)),
      model_(new AuditModel(this)),
      environment_(new QComboBox(this)),
      backend_list_(new QListWidget(this)),
      attempts_(new QListWidget(this)),
      run_(new QPushButton(tr("Run a&udit"), this)),
      cancel_(new QPushButton(tr("Stop"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      table_(new QTableView(this)),
      evidence_(new QPlainTextEdit(this)),
      reports_(new QTreeWidget(this)) {
  fill_backend_checklist(backend_list_, *backends_, /*labelled=*/true);
  environment_->setObjectName(QStringLiteral("environment"));
  environment_->addItems(environments_.names());
  environment_->setToolTip(
      tr("Audit the backends in this environment: a report proves only the tool description "
         "of the environment it was made in (its digest is part of the policy hash)."));
  if (Result<audit::Catalogue> catalogue = audit::builtin_catalogue()) {
    for (const audit::Attempt& attempt : catalogue->attempts) {
      const QString id = QString::fromStdString(attempt.id);
      auto* row =
          new QListWidgetItem(attempt.host_acting ? id + tr(" (acts on the host)") : id, attempts_);
      row->setData(Qt::UserRole, id);
      row->setFlags(row->flags() | Qt::ItemIsUserCheckable);
      // An attempt that acts on the host is the user's explicit choice, never a default.
      row->setCheckState(attempt.host_acting ? Qt::Unchecked : Qt::Checked);
      row->setToolTip(QString::fromStdString(attempt.title) +
                      (attempt.host_acting
                           ? tr("\nRuns only against a backend that claims to stop it; "
                                "SKIPPED elsewhere.")
                           : QString()));
    }
  }
  backend_list_->setMaximumHeight(110);
  cancel_->setEnabled(false);
  progress_->setFormat(tr("%v of %m attempts"));
  progress_->setValue(0);
  status_->setWordWrap(true);
  status_->setText(
      tr("Runs the ticked attempts on each ticked backend; every attempt "
         "ticked stores a report that proves the tool description."));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  evidence_->setReadOnly(true);
  evidence_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  evidence_->setMaximumHeight(90);
  reports_->setHeaderLabels(
      {tr("Backend"), tr("Version"), tr("Host"), tr("Policy hash"), tr("Date"), tr("Complete")});
  reports_->setRootIsDecorated(false);

  auto* side = new QVBoxLayout;
  side->addWidget(new QLabel(tr("Environment"), this));
  side->addWidget(environment_);
  side->addWidget(new QLabel(tr("Backends"), this));
  side->addWidget(backend_list_);
  side->addWidget(new QLabel(tr("Attempts"), this));
  side->addWidget(attempts_, 1);
  auto* all = new QPushButton(tr("Tick all"), this);
  auto* none = new QPushButton(tr("Tick none"), this);
  all->setObjectName(QStringLiteral("tickAll"));
  none->setObjectName(QStringLiteral("tickNone"));
  connect(all, &QPushButton::clicked, this, [this] { check_all_attempts(true); });
  connect(none, &QPushButton::clicked, this, [this] { check_all_attempts(false); });
  auto* ticks = new QHBoxLayout;
  ticks->addWidget(all);
  ticks->addWidget(none);
  side->addLayout(ticks);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  side->addLayout(buttons);
  auto* side_box = new QWidget(this);
  side_box->setObjectName(QStringLiteral("sidePanel"));
  side_box->setLayout(side);
  side_box->setMaximumWidth(300);

  auto* matrix = new QWidget(this);
  auto* matrix_layout = new QVBoxLayout(matrix);
  matrix_layout->setContentsMargins(0, 0, 0, 0);
  matrix_layout->addWidget(status_);
  matrix_layout->addWidget(progress_);
  matrix_layout->addWidget(table_, 1);
  matrix_layout->addWidget(evidence_);
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(matrix);
  auto* stored_box = new QWidget(this);
  auto* stored_layout = new QVBoxLayout(stored_box);
  stored_layout->setContentsMargins(0, 0, 0, 0);
  stored_layout->addWidget(new QLabel(tr("Stored reports (what tool descriptions are proven "
                                         "by); select one to show it"),
                                      this));
  stored_layout->addWidget(reports_, 1);
  right->addWidget(stored_box);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(side_box);
  layout->addWidget(right, 1);

  connect(run_, &QPushButton::clicked, this, &AuditTab::audit);
  connect(cancel_, &QPushButton::clicked, this, &AuditTab::cancel);
  connect(controller_, &AuditController::verdict, model_, &AuditModel::add_verdict);
  connect(controller_, &AuditController::progress, this, [this](int done, int total) {
    progress_->setMaximum(total);
    progress_->setValue(done);
  });
  connect(controller_, &AuditController::finished, this, [this](int stored, const QString& error) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    if (!error.isEmpty()) {
      status_->setText(tr("Audit stopped: %1").arg(error));
    } else if (stored == 0 && unticked_ > 0) {
      // Only an audit of every attempt proves a tool description, so only that is stored.
      status_->setText(tr("Audit finished; no report stored: %1 attempt(s) were not ticked, and "
                          "only an audit of every attempt is stored (it is what proves a tool "
                          "description). Tick all to store one.")
                           .arg(unticked_));
    } else {
      status_->setText(tr("Audit finished: %1 report(s) stored.").arg(stored));
    }
    refresh_reports();
    emit audited(stored);
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            evidence_->setPlainText(model_->evidence(current.row()));
          });
  connect(reports_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (item != nullptr && !running()) show_report(reports_->indexOfTopLevelItem(item));
  });
  refresh_reports();
}

void AuditTab::check_backends(const QStringList& names) { check_only(backend_list_, names); }
void AuditTab::check_attempts(const QStringList& ids) { check_only(attempts_, ids); }

void AuditTab::check_all_attempts(bool checked) {
  for (int i = 0; i < attempts_->count(); ++i) {
    attempts_->item(i)->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
  }
}

bool AuditTab::running() const { return controller_->running(); }

void AuditTab::audit() {
  const QStringList names = checked(backend_list_);
  const QStringList ids = checked(attempts_);
  if (names.isEmpty() || ids.isEmpty()) {
    status_->setText(tr("Tick at least one backend and one attempt."));
    return;
  }
  const bool every = ids.size() == attempts_->count();
  unticked_ = static_cast<int>(attempts_->count() - ids.size());
  const QString env_name = environment_->currentText();
  Result<BackendListPtr> in_env = environments_.in(env_name);
  if (!in_env) {
    status_->setText(tr("Cannot audit in environment %1: %2")
                         .arg(env_name, QString::fromStdString(in_env.error().describe())));
    return;
  }
  for (const QString& name : names) {
    if ((*in_env)->backend(name) == nullptr) {
      status_->setText(tr("Cannot start the audit: backend %1 is not available in environment %2.")
                           .arg(name, env_name));
      return;
    }
  }
  model_->reset(names);
  evidence_->clear();
  if (!controller_->start(*in_env, names, every ? QStringList() : ids, backends_)) {
    status_->setText(tr("Cannot start the audit (a backend is unavailable)."));
    return;
  }
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setMaximum(int(names.size() * ids.size()));
  progress_->setValue(0);
  const QString what = env_name == QLatin1String(environment::kHostName)
                           ? names.join(", ")
                           : tr("%1 in environment %2").arg(names.join(", "), env_name);
  status_->setText(every ? tr("Auditing %1 with every attempt…").arg(what)
                         : tr("Auditing %1 with %2 attempt(s); a partial audit is not stored.")
                               .arg(what)
                               .arg(ids.size()));
}

void AuditTab::cancel() { controller_->cancel(); }

void AuditTab::set_environment(const QString& name) {
  if (environment_->findText(name) < 0) environment_->addItem(name);
  environment_->setCurrentText(name);
}

void AuditTab::refresh_environments() {
  if (!environments_.refresh()) return;
  const QString chosen = environment_->currentText();
  environment_->clear();
  environment_->addItems(environments_.names());
  environment_->setCurrentIndex(std::max(0, environment_->findText(chosen)));
}

void AuditTab::select_row(int row) { table_->selectRow(row); }
QString AuditTab::evidence_text() const { return evidence_->toPlainText(); }
QString AuditTab::status_text() const { return status_->text(); }

void AuditTab::refresh_reports() {
  reports_->clear();
  for (const StoredReport& stored : stored_reports()) {
    const audit::AuditReport& r = stored.report;
    auto* item = new QTreeWidgetItem(
        {QString::fromStdString(r.binding.backend_name),
         QString::fromStdString(r.binding.backend_version), QString::fromStdString(r.host_summary),
         short_hash(r.binding.policy_hash), QString::fromStdString(r.created_at),
         r.complete ? tr("yes") : tr("no")});
    item->setToolTip(0, QString::fromStdString(stored.path.string()));
    item->setToolTip(2, QString::fromStdString(r.binding.host_fingerprint));
    item->setToolTip(3, QString::fromStdString(r.binding.policy_hash));
    reports_->addTopLevelItem(item);
  }
  for (int c = 0; c < reports_->columnCount(); ++c) reports_->resizeColumnToContents(c);
}

void AuditTab::show_report(int index) {
  const std::vector<StoredReport> all = stored_reports();
  if (index < 0 || static_cast<std::size_t>(index) >= all.size()) return;
  const audit::AuditReport& r = all[static_cast<std::size_t>(index)].report;
  const QString name = QString::fromStdString(r.binding.backend_name);
  model_->reset({name});
  for (const audit::AttemptVerdict& v : r.verdicts) model_->add_verdict(name, v);
  // The bar follows the matrix shown: a stored report is whole, not the last audit's count.
  progress_->setMaximum(std::max(1, static_cast<int>(r.verdicts.size())));
  progress_->setValue(static_cast<int>(r.verdicts.size()));
  status_->setText(tr("Stored report of %1 %2 from %3.")
                       .arg(name, QString::fromStdString(r.binding.backend_version),
                            QString::fromStdString(r.created_at)));
}

}  // namespace cordon::inspector
