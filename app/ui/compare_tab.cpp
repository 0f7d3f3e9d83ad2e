#include "compare_tab.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "compare_model.h"
#include "run_controller.h"
#include "run_tab.h"

namespace cordon::inspector {

CompareTab::CompareTab(BackendListPtr backends, std::function<RunRequest()> request,
                       QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      request_(std::move(request)),
      choices_(new QListWidget(this)),
      run_(new QPushButton(tr("Compare"), this)),
      table_(new QTableView(this)),
      status_(new QLabel(this)),
      model_(new CompareModel(this)) {
  fill_backend_checklist(choices_, *backends_);
  choices_->setMaximumWidth(220);
  table_->setModel(model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  status_->setText(tr("Runs the Run tab's code and limits on every ticked backend at once."));

  auto* side = new QVBoxLayout;
  side->addWidget(new QLabel(tr("Backends"), this));
  side->addWidget(choices_, 1);
  side->addWidget(run_);
  auto* main = new QVBoxLayout;
  main->addWidget(status_);
  main->addWidget(table_, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addLayout(side);
  layout->addLayout(main, 1);
  connect(run_, &QPushButton::clicked, this, &CompareTab::compare);
}

void CompareTab::set_history_path(std::optional<std::filesystem::path> path) {
  history_path_ = std::move(path);
}

void CompareTab::check_backends(const QStringList& names) {
  for (int i = 0; i < choices_->count(); ++i) {
    QListWidgetItem* item = choices_->item(i);
    if (item->flags() & Qt::ItemIsUserCheckable) {
      item->setCheckState(names.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
    }
  }
}

bool CompareTab::running() const {
  return std::any_of(controllers_.begin(), controllers_.end(),
                     [](const RunController* controller) { return controller->running(); });
}

void CompareTab::compare() {
  if (running()) return;
  QStringList names;
  for (int i = 0; i < choices_->count(); ++i) {
    if (choices_->item(i)->checkState() == Qt::Checked) names << choices_->item(i)->text();
  }
  if (names.size() < 2) {
    status_->setText(tr("Tick at least two backends."));
    return;
  }
  for (RunController* controller : controllers_) controller->deleteLater();
  controllers_.clear();
  model_->set_backends(names);
  const RunRequest request = request_();
  run_->setEnabled(false);
  status_->setText(tr("Running on %1…").arg(names.join(QStringLiteral(", "))));
  for (int column = 0; column < names.size(); ++column) {
    auto* controller = new RunController(this);
    controller->set_history_path(history_path_);
    controllers_.push_back(controller);
    connect(controller, &RunController::finished, this, [this, column](const RunResult& result) {
      model_->set_result(column, result);
      finish_if_complete();
    });
    if (!controller->start(backends_, names.at(column), request)) {
      model_->set_result(
          column, sandbox_error({names.at(column).toStdString(), {}}, "backend not available"));
    }
  }
  finish_if_complete();
}

void CompareTab::finish_if_complete() {
  if (!model_->complete() || run_->isEnabled()) return;
  run_->setEnabled(true);
  status_->setText(tr("Highlighted rows differ between backends."));
  emit compared();
}

}  // namespace cordon::inspector
