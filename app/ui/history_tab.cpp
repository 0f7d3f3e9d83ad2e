#include "history_tab.h"

#include <QComboBox>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "history_model.h"
#include "result_view.h"

namespace cordon::inspector {

HistoryTab::HistoryTab(QWidget* parent)
    : QWidget(parent),
      model_(new HistoryModel(this)),
      search_(new QLineEdit(this)),
      source_(new QComboBox(this)),
      environment_(new QComboBox(this)),
      table_(new QTableView(this)),
      result_(new ResultView(this)),
      rerun_(new QPushButton(tr("Re-run"), this)),
      load_(new QPushButton(tr("Load into Run tab"), this)),
      delete_(new QPushButton(tr("Delete"), this)),
      undo_(new QPushButton(tr("Undo delete"), this)),
      session_(new QPushButton(tr("Session"), this)),
      status_(new QLabel(this)) {
  search_->setPlaceholderText(tr("Search code, output, backend, environment, outcome"));
  search_->setClearButtonEnabled(true);
  source_->addItem(tr("All sources"), QString());
  source_->setToolTip(tr("Show the runs of one source only"));
  environment_->addItem(tr("All environments"), QString());
  environment_->setToolTip(tr("Show the runs in one environment (root filesystem) only"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setSortingEnabled(true);
  table_->sortByColumn(HistoryModel::kTime, Qt::DescendingOrder);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  // One line per run, as many as fit: no wrapped dates, rows as tall as a line of text.
  table_->setWordWrap(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(HistoryModel::kTime,
                                                   QHeaderView::ResizeToContents);
  // "subprocess (no isolation)" whole, not "subprocess (…".
  table_->horizontalHeader()->setSectionResizeMode(HistoryModel::kBackend,
                                                   QHeaderView::ResizeToContents);
  rerun_->setToolTip(tr("Load this run's code and settings into the Run tab and run them"));
  load_->setToolTip(tr("Load this run's code and settings into the Run tab, to edit first"));
  undo_->setObjectName(QStringLiteral("undoDelete"));
  undo_->hide();
  status_->setWordWrap(true);
  rerun_->setEnabled(false);
  load_->setEnabled(false);
  delete_->setEnabled(false);

  auto* bar = new QHBoxLayout;
  bar->addWidget(search_, 1);
  bar->addWidget(source_);
  bar->addWidget(environment_);
  bar->addWidget(rerun_);
  bar->addWidget(load_);
  bar->addWidget(delete_);
  bar->addWidget(undo_);
  session_->setObjectName(QStringLiteral("sessionCalls"));
  session_->setCheckable(true);
  session_->setEnabled(false);
  session_->setToolTip(tr("Only the selected run's session: its calls in the order they ran"));
  bar->addWidget(session_);
  // Side by side: the list keeps the tab's whole height (at 640 px, 15 runs and more in
  // sight; stacked over the Result it had room for five).
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(result_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(search_, &QLineEdit::textChanged, model_, &HistoryModel::set_search);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &HistoryTab::show_selected);
  connect(model_, &QAbstractItemModel::modelReset, this, &HistoryTab::show_selected);
  connect(model_, &QAbstractItemModel::modelReset, this, &HistoryTab::update_filters);
  connect(source_, &QComboBox::currentIndexChanged, this,
          [this](int index) { model_->set_source_filter(source_->itemData(index).toString()); });
  connect(environment_, &QComboBox::currentIndexChanged, this, [this](int index) {
    model_->set_environment_filter(environment_->itemData(index).toString());
  });
  connect(model_, &HistoryModel::error_changed, this, [this](const QString& error) {
    status_->setText(error.isEmpty() ? QString() : tr("History unavailable: %1").arg(error));
  });
  connect(rerun_, &QPushButton::clicked, this, &HistoryTab::rerun_selected);
  connect(load_, &QPushButton::clicked, this, &HistoryTab::load_selected);
  connect(delete_, &QPushButton::clicked, this, &HistoryTab::delete_selected);
  connect(undo_, &QPushButton::clicked, this, &HistoryTab::undo_delete);
  connect(session_, &QPushButton::toggled, this, [this](bool only_session) {
    model_->set_session_filter(only_session ? model_->session_at(selected_row()) : QString());
  });
}

bool HistoryTab::open(const std::filesystem::path& path) {
  const bool opened = model_->open(path);
  table_->sortByColumn(table_->horizontalHeader()->sortIndicatorSection(),
                       table_->horizontalHeader()->sortIndicatorOrder());
  // Under the home directory as "~/…": the part worth reading fits the line.
  if (opened) {
    QString shown = QString::fromStdString(path.string());
    const QString home = QDir::homePath();
    if (shown.startsWith(home + QLatin1Char('/')))
      shown = QLatin1Char('~') + shown.mid(home.size());
    status_->setText(tr("Runs recorded in %1").arg(shown));
  }
  return opened;
}

void HistoryTab::refresh() {
  // A refresh is a model reset: keep the selected run selected if it is still listed.
  const std::int64_t selected = model_->id_at(selected_row());
  model_->refresh();
  for (int row = 0; selected != 0 && row < model_->rowCount(); ++row) {
    if (model_->id_at(row) == selected) {
      select_row(row);
      break;
    }
  }
}

namespace {

// Refills a filter's entries after its first ("All …") with `wanted` (item data: the value,
// text: label(value)), keeping `chosen` offered, and chosen, even when its last run was
// deleted.
template <typename Label>
void refill(QComboBox* box, QStringList wanted, const QString& chosen, Label label) {
  if (!chosen.isEmpty() && !wanted.contains(chosen)) wanted << chosen;
  QStringList have;
  for (int i = 1; i < box->count(); ++i) have << box->itemData(i).toString();
  if (have == wanted) return;
  const QSignalBlocker quiet(box);  // the filter itself does not change here
  while (box->count() > 1) box->removeItem(1);
  for (const QString& value : wanted) {
    box->addItem(label(value), value);
    // A label that shortens its value (an unregistered --rootfs's digest) shows it whole.
    if (box->itemText(box->count() - 1) != value) {
      box->setItemData(box->count() - 1, value, Qt::ToolTipRole);
    }
  }
  box->setCurrentIndex(std::max(0, box->findData(chosen)));
}

}  // namespace

void HistoryTab::update_filters() {
  refill(source_, model_->sources(), model_->source_filter(),
         [](const QString& source) { return source; });
  refill(environment_, model_->environments(), model_->environment_filter(),
         &HistoryModel::environment_filter_text);
}

int HistoryTab::selected_row() const {
  const auto rows = table_->selectionModel()->selectedRows();
  return rows.isEmpty() ? -1 : rows.first().row();
}

void HistoryTab::select_row(int row) {
  if (row >= 0) table_->selectRow(row);
}

void HistoryTab::show_selected() {
  const int row = selected_row();
  // Nothing selected (a new list, a search, a delete): the detail pane shows the newest
  // run listed rather than nothing. Selecting comes back here through selectionChanged.
  if (row < 0 && model_->rowCount() > 0) {
    select_row(model_->newest_row());
    return;
  }
  rerun_->setEnabled(row >= 0);
  load_->setEnabled(row >= 0);
  delete_->setEnabled(row >= 0);
  session_->setEnabled(session_->isChecked() || !model_->session_at(row).isEmpty());
  const auto record = row >= 0 ? model_->record_at(row) : std::nullopt;
  if (!record) {
    result_->clear();
    return;
  }
  result_->show_result(record->result, record->stdout_data, record->stderr_data);
}

void HistoryTab::rerun_selected() {
  const int row = selected_row();
  if (const auto record = row >= 0 ? model_->record_at(row) : std::nullopt) emit rerun(*record);
}

void HistoryTab::load_selected() {
  const int row = selected_row();
  if (const auto record = row >= 0 ? model_->record_at(row) : std::nullopt) emit load(*record);
}

// Delete does not ask: it can be undone instead, which interrupts nobody.
void HistoryTab::delete_selected() {
  const int row = selected_row();
  auto record = row >= 0 ? model_->record_at(row) : std::nullopt;
  if (!record || !model_->remove_at(row)) return;
  deleted_ = std::move(record);
  undo_->show();
}

void HistoryTab::undo_delete() {
  if (!deleted_) return;
  const std::int64_t id = model_->restore(*deleted_);
  if (id == 0) return;
  deleted_.reset();
  undo_->hide();
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (model_->id_at(row) == id) select_row(row);
  }
}

}  // namespace cordon::inspector
