#include "main_window.h"

#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "audit_tab.h"
#include "code_editor.h"
#include "compare_tab.h"
#include "cordon/interpreter.h"
#include "frontend/history.h"
#include "history_model.h"
#include "history_tab.h"
#include "plan_tab.h"
#include "result_view.h"
#include "run_tab.h"
#include "tool_tab.h"

namespace cordon::inspector {

MainWindow::MainWindow(BackendListPtr backends, QWidget* parent)
    : QMainWindow(parent),
      backends_(std::move(backends)),
      tabs_(new QTabWidget(this)),
      run_(new RunTab(backends_, this)),
      result_(new ResultView(this)),
      history_(new HistoryTab(this)),
      plan_(new PlanTab(backends_, this)),
      compare_(new CompareTab(
          backends_, [this] { return run_->request(); }, this)),
      tool_(new ToolTab(backends_, this)),
      audit_(new AuditTab(backends_, this)) {
  setWindowTitle(tr("cordon inspector"));
  // No Alt-mnemonics on the tabs: they are always active and took the letters of the
  // fields (Alt+T opened both Tool description and Timeout). The tabs have Ctrl+1..7 (the
  // Go menu) instead, so each Alt letter belongs to one control of the tab shown.
  tabs_->addTab(run_, tr("Run"));
  tabs_->addTab(result_, tr("Result"));
  tabs_->addTab(history_, tr("History"));
  tabs_->addTab(plan_, tr("Plan"));
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->addTab(tool_, tr("Tool description"));
  tabs_->addTab(audit_, tr("Audit"));
  setCentralWidget(tabs_);
  QStringList unisolated;
  for (const BackendItem& item : backends_->items()) {
    if (item.unisolated) unisolated << item.name;
  }
  history_->model()->set_unisolated_backends(unisolated);
  build_menus();

  connect(run_, &RunTab::run_finished, this, [this](const RunResult& result) {
    result_->show_result(result);
    tabs_->setCurrentIndex(kResult);
    history_->refresh();
  });
  connect(run_, &RunTab::history_error, this, [this](const QString& message) {
    statusBar()->showMessage(tr("Run not recorded in history: %1").arg(message));
  });
  connect(compare_, &CompareTab::compared, history_, &HistoryTab::refresh);
  connect(compare_, &CompareTab::open_result, this, [this](const RunResult& result) {
    result_->show_result(result);
    tabs_->setCurrentIndex(kResult);
  });
  connect(audit_, &AuditTab::audited, this, &MainWindow::update_plan);  // new proof
  connect(history_, &HistoryTab::load, this, [this](const history::RunRecord& record) {
    run_->load(record);
    tabs_->setCurrentIndex(kRun);
  });
  connect(history_, &HistoryTab::rerun, this, [this](const history::RunRecord& record) {
    run_->load(record);
    tabs_->setCurrentIndex(kRun);
    run_->run();
  });
  connect(run_, &RunTab::settings_changed, this, &MainWindow::update_plan);
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int index) {
    // `cordon environment add|rm` may have run meanwhile.
    if (index == kRun) run_->refresh_environments();
    if (index == kCompare) compare_->refresh_environments();
    if (index == kAudit) audit_->refresh_environments();
    if (index == kPlan || index == kTool) update_plan();
    if (index == kHistory) history_->refresh();      // runs the CLI made meanwhile
    if (index == kAudit) audit_->refresh_reports();  // `cordon audit` may have stored one
  });

  const QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  tabs_->setCurrentIndex(settings.value(QStringLiteral("window/tab"), kRun).toInt());
  run_->load_settings(settings);
  apply_history_settings();
  update_plan();
}

MainWindow::~MainWindow() = default;

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open code…"), QKeySequence::Open, this, &MainWindow::open_code);
  file->addAction(tr("&Save code…"), QKeySequence::Save, this, &MainWindow::save_code);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* history = menuBar()->addMenu(tr("&Settings"));
  record_action_ = history->addAction(tr("&Record runs in history"));
  record_action_->setCheckable(true);
  record_action_->setChecked(QSettings().value(QStringLiteral("history/enabled"), true).toBool());
  connect(record_action_, &QAction::toggled, this, &MainWindow::set_recording);
  history->addAction(tr("History &file…"), this, &MainWindow::choose_history_file);
  QMenu* go = menuBar()->addMenu(tr("&Go"));
  for (int i = 0; i < tabs_->count(); ++i) {
    QAction* action =
        go->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
    action->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)));
    tabs_->setTabToolTip(i, tr("%1 (%2)").arg(tabs_->tabText(i), action->shortcut().toString(
                                                                     QKeySequence::NativeText)));
  }
  go->addSeparator();
  // Compare from anywhere: the Run tab's code and limits on every ticked backend.
  go->addAction(tr("Compare backends"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Return), this,
                [this] {
                  tabs_->setCurrentIndex(kCompare);
                  compare_->compare();
                });
}

std::optional<std::filesystem::path> MainWindow::history_path() const {
  if (qEnvironmentVariableIsSet(history::kPathEnv)) {
    return std::filesystem::path(qEnvironmentVariable(history::kPathEnv).toStdString());
  }
  const QString configured = QSettings().value(QStringLiteral("history/path")).toString();
  if (!configured.isEmpty()) return std::filesystem::path(configured.toStdString());
  const auto path = history::default_path();
  return path ? std::optional(*path) : std::nullopt;
}

bool MainWindow::recording() const {
  return record_action_->isChecked() && !history::disabled_by_env();
}

void MainWindow::set_recording(bool on) {
  if (record_action_->isChecked() != on) record_action_->setChecked(on);
  QSettings().setValue(QStringLiteral("history/enabled"), on);
  apply_history_settings();
}

void MainWindow::apply_history_settings() {
  const auto path = history_path();
  const auto record_to = recording() ? path : std::nullopt;
  run_->set_history_path(record_to);
  compare_->set_history_path(record_to);
  if (path && !history_->open(*path)) {
    statusBar()->showMessage(tr("History unavailable; runs still work"));
  }
}

// Plan and Tool description follow the Run tab's backend, timeout and limits.
void MainWindow::update_plan() {
  const RunRequest request = run_->request();
  // In the Run tab's environment (the host's list when it cannot be had: the Run tab says why).
  Result<BackendListPtr> in_env = run_->backends_in(run_->environment());
  plan_->set_backends(in_env ? *in_env : backends_);
  tool_->set_backends(in_env ? *in_env : backends_);
  plan_->show_plan(run_->backend(), request);
  tool_->show_tool(run_->backend(), request);
}

void MainWindow::save_settings() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/tab"), tabs_->currentIndex());
  run_->save_settings(settings);
}

void MainWindow::changeEvent(QEvent* event) {
  // Back from a terminal where `cordon environment add` may have run.
  if (event->type() == QEvent::ActivationChange && isActiveWindow()) {
    run_->refresh_environments();
    compare_->refresh_environments();
    audit_->refresh_environments();
  }
  QMainWindow::changeEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  save_settings();
  QMainWindow::closeEvent(event);
}

void MainWindow::open_code() {
  const QString name = QFileDialog::getOpenFileName(this, tr("Open code"));
  if (name.isEmpty()) return;
  QFile file(name);
  if (!file.open(QIODevice::ReadOnly)) {
    statusBar()->showMessage(tr("Cannot open %1: %2").arg(name, file.errorString()));
    return;
  }
  const Language language = language_of_file(name.toStdString()).value_or(Language::kSh);
  run_->set_code(QString::fromUtf8(file.readAll()), language);
}

void MainWindow::save_code() {
  const QString name = QFileDialog::getSaveFileName(this, tr("Save code"));
  if (name.isEmpty()) return;
  QFile file(name);
  if (!file.open(QIODevice::WriteOnly) || file.write(run_->editor()->toPlainText().toUtf8()) < 0) {
    statusBar()->showMessage(tr("Cannot save %1: %2").arg(name, file.errorString()));
  }
}

void MainWindow::choose_history_file() {
  const QString name = QFileDialog::getSaveFileName(this, tr("History file"), QString(),
                                                    tr("SQLite (*.sqlite3 *.db)"), nullptr,
                                                    QFileDialog::DontConfirmOverwrite);
  if (name.isEmpty()) return;
  QSettings().setValue(QStringLiteral("history/path"), name);
  apply_history_settings();
}

}  // namespace cordon::inspector
