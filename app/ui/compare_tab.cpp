#include "compare_tab.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "compare_model.h"
#include "line_diff.h"
#include "run_controller.h"
#include "run_tab.h"

namespace cordon::inspector {

CompareTab::CompareTab(BackendListPtr backends, std::function<RunRequest()> request,
                       QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      request_(std::move(request)),
      choices_(new QListWidget(this)),
      environments_(new QListWidget(this)),
      lists_(backends_),
      run_(new QPushButton(tr("Compare"), this)),
      repeats_(new QSpinBox(this)),
      table_(new QTableView(this)),
      status_(new QLabel(this)),
      left_(new QComboBox(this)),
      right_(new QComboBox(this)),
      diff_(new QPlainTextEdit(this)),
      model_(new CompareModel(this)) {
  fill_backend_checklist(choices_, *backends_, /*labelled=*/true);
  choices_->setMaximumWidth(220);
  environments_->setObjectName(QStringLiteral("environments"));
  environments_->setMaximumWidth(220);
  fill_environments({QString::fromLatin1(environment::kHostName)});
  table_->setModel(model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  // Full output in its cell: rows grow to their lines.
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setWordWrap(true);
  // One run's timing is noise; five give a median and a spread worth reading.
  repeats_->setRange(1, 50);
  repeats_->setValue(5);
  repeats_->setToolTip(
      tr("Each backend runs this many times, one after another; timings "
         "show the median and min–max, outcome and output the first run."));
  diff_->setReadOnly(true);
  diff_->setLineWrapMode(QPlainTextEdit::NoWrap);
  diff_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  status_->setText(tr("Runs the Run tab's code and limits on every ticked backend at once."));

  auto* side = new QVBoxLayout;
  side->addWidget(new QLabel(tr("Backends"), this));
  side->addWidget(choices_, 1);
  side->addWidget(new QLabel(tr("Environments"), this));
  side->addWidget(environments_);
  auto* repeat_row = new QHBoxLayout;
  repeat_row->addWidget(new QLabel(tr("Runs each"), this));
  repeat_row->addWidget(repeats_);
  side->addLayout(repeat_row);
  side->addWidget(run_);
  auto* main = new QVBoxLayout;
  main->addWidget(status_);
  auto* pick = new QHBoxLayout;
  pick->addWidget(new QLabel(tr("Line diff of"), this));
  pick->addWidget(left_);
  pick->addWidget(new QLabel(tr("and"), this));
  pick->addWidget(right_);
  pick->addStretch(1);
  auto* diff_pane = new QWidget(this);
  auto* diff_layout = new QVBoxLayout(diff_pane);
  diff_layout->setContentsMargins(0, 0, 0, 0);
  diff_layout->addLayout(pick);
  diff_layout->addWidget(diff_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(diff_pane);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  main->addWidget(split, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addLayout(side);
  layout->addLayout(main, 1);
  connect(run_, &QPushButton::clicked, this, &CompareTab::compare);
  connect(left_, &QComboBox::currentIndexChanged, this, &CompareTab::update_diff);
  connect(right_, &QComboBox::currentIndexChanged, this, &CompareTab::update_diff);
  connect(model_, &CompareModel::dataChanged, this, &CompareTab::update_diff);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (const auto result = model_->result(index.column())) emit open_result(*result);
  });
  // A double-click on the column's header opens it too.
  connect(table_->horizontalHeader(), &QHeaderView::sectionDoubleClicked, this, [this](int column) {
    if (const auto result = model_->result(column)) emit open_result(*result);
  });
}

void CompareTab::choose_diff(int left, int right) {
  left_->setCurrentIndex(left);
  right_->setCurrentIndex(right);
  update_diff();
}

QString CompareTab::diff_text() const { return diff_->toPlainText(); }

void CompareTab::update_diff() {
  const int left = left_->currentIndex();
  const int right = right_->currentIndex();
  if (left < 0 || right < 0 || left >= model_->columnCount() || right >= model_->columnCount()) {
    diff_->clear();
    return;
  }
  const auto& a = model_->result(left);
  const auto& b = model_->result(right);
  if (!a || !b) {
    diff_->setPlainText(tr("Waiting for both Results…"));
    return;
  }
  const auto lines = [](const std::string& bytes) {
    return QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()))
        .split(QLatin1Char('\n'));
  };
  diff_->setPlainText(
      tr("stdout (- %1, + %2)\n").arg(left_->currentText(), right_->currentText()) +
      inspector::diff_text(diff_lines(lines(a->stdout_data), lines(b->stdout_data))) +
      tr("\nstderr\n") +
      inspector::diff_text(diff_lines(lines(a->stderr_data), lines(b->stderr_data))));
}

void CompareTab::set_history_path(std::optional<std::filesystem::path> path) {
  history_path_ = std::move(path);
}

void CompareTab::check_backends(const QStringList& names) {
  for (int i = 0; i < choices_->count(); ++i) {
    QListWidgetItem* item = choices_->item(i);
    if (item->flags() & Qt::ItemIsUserCheckable) {
      const QString name = item->data(Qt::UserRole).toString();
      item->setCheckState(names.contains(name) ? Qt::Checked : Qt::Unchecked);
    }
  }
}

void CompareTab::fill_environments(const QStringList& ticked) {
  environments_->clear();
  for (const QString& name : lists_.names()) {
    auto* item = new QListWidgetItem(name, environments_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(ticked.contains(name) ? Qt::Checked : Qt::Unchecked);
  }
}

void CompareTab::refresh_environments() {
  if (!lists_.refresh()) return;
  QStringList ticked;
  for (int i = 0; i < environments_->count(); ++i) {
    if (environments_->item(i)->checkState() == Qt::Checked)
      ticked << environments_->item(i)->text();
  }
  fill_environments(ticked);
}

void CompareTab::check_environments(const QStringList& names) {
  for (int i = 0; i < environments_->count(); ++i) {
    QListWidgetItem* item = environments_->item(i);
    item->setCheckState(names.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
  }
}

bool CompareTab::running() const {
  // Between two repeats of a column no controller runs, yet the Compare is not over.
  return (!controllers_.empty() && !model_->complete()) ||
         std::any_of(controllers_.begin(), controllers_.end(),
                     [](const RunController* controller) { return controller->running(); });
}

void CompareTab::compare() {
  if (running()) return;
  QStringList environments;
  for (int i = 0; i < environments_->count(); ++i) {
    if (environments_->item(i)->checkState() == Qt::Checked) {
      environments << environments_->item(i)->text();
    }
  }
  if (environments.isEmpty()) environments << QString::fromLatin1(environment::kHostName);
  QStringList names;   // what the backends are called
  QStringList labels;  // what the lists show: "subprocess (no isolation)", "namespace · sci"
  column_backends_.clear();
  for (const QString& env : environments) {
    Result<BackendListPtr> in_env = lists_.in(env);
    if (!in_env) {
      status_->setText(QString::fromStdString(in_env.error().describe()));
      return;
    }
    const bool host_only = environments.size() == 1 && env == QLatin1String(environment::kHostName);
    for (int i = 0; i < choices_->count(); ++i) {
      const QListWidgetItem* item = choices_->item(i);
      if (item->checkState() != Qt::Checked) continue;
      names << item->data(Qt::UserRole).toString();
      labels << (host_only ? item->text() : tr("%1 · %2").arg(item->text(), env));
      column_backends_.push_back(*in_env);
    }
  }
  if (names.size() < 2) {
    status_->setText(tr("Tick at least two backends, or a backend and two environments."));
    return;
  }
  for (RunController* controller : controllers_) controller->deleteLater();
  controllers_.clear();
  model_->set_backends(names, repeats_->value(), labels);
  last_request_ = request_();
  model_->set_limits(last_request_.limits);
  for (QComboBox* box : {left_, right_}) {
    const QSignalBlocker block(box);
    box->clear();
    box->addItems(labels);
  }
  left_->setCurrentIndex(0);
  right_->setCurrentIndex(1);
  run_->setEnabled(false);
  status_->setText(tr("Running on %1…").arg(labels.join(QStringLiteral(", "))));
  for (int column = 0; column < names.size(); ++column) {
    auto* controller = new RunController(this);
    controller->set_history_path(history_path_);
    controllers_.push_back(controller);
    connect(controller, &RunController::finished, this, [this, column](const RunResult& result) {
      model_->add_result(column, result);
      // Next repeat once this run's worker has handed everything over.
      if (model_->wants_more(column)) {
        QTimer::singleShot(0, this, [this, column] { start_column(column); });
      }
      finish_if_complete();
    });
  }
  // The backends run side by side; each backend's repeats one after another.
  for (int column = 0; column < names.size(); ++column) start_column(column);
  finish_if_complete();
}

void CompareTab::start_column(int column) {
  RunController* controller = controllers_.at(static_cast<std::size_t>(column));
  const QString name = model_->backends().at(column);
  // History keeps each backend's first run of a Compare: the repeats are there for the
  // timings, and five copies of one run would bury the rest of the history.
  controller->set_history_path(model_->runs(column) == 0 ? history_path_ : std::nullopt);
  const BackendListPtr& backends = column_backends_.at(static_cast<std::size_t>(column));
  RunRequest request = last_request_;
  request.environment = backends->environment();
  if (!controller->start(backends, name, std::move(request))) {
    model_->add_result(column, sandbox_error({name.toStdString(), {}}, "backend not available"));
    finish_if_complete();
  }
}

void CompareTab::finish_if_complete() {
  if (!model_->complete() || run_->isEnabled()) return;
  run_->setEnabled(true);
  status_->setText(tr("Highlighted rows differ between the columns."));
  emit compared();
}

}  // namespace cordon::inspector
