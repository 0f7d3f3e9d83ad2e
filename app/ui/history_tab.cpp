#include "history_tab.h"

#include <QComboBox>
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
      table_(new QTableView(this)),
      result_(new ResultView(this)),
      rerun_(new QPushButton(tr("Re-run"), this)),
      delete_(new QPushButton(tr("Delete"), this)),
      status_(new QLabel(this)) {
  search_->setPlaceholderText(tr("Search code, output, backend, outcome"));
  search_->setClearButtonEnabled(true);
  source_->addItem(tr("All sources"), QString());
  source_->setToolTip(tr("Show the runs of one source only"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setSortingEnabled(true);
  table_->sortByColumn(HistoryModel::kTime, Qt::DescendingOrder);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  status_->setWordWrap(true);
  rerun_->setEnabled(false);
  delete_->setEnabled(false);

  auto* bar = new QHBoxLayout;
  bar->addWidget(search_, 1);
  bar->addWidget(source_);
  bar->addWidget(rerun_);
  bar->addWidget(delete_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(result_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(search_, &QLineEdit::textChanged, model_, &HistoryModel::set_search);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &HistoryTab::show_selected);
  connect(model_, &QAbstractItemModel::modelReset, this, &HistoryTab::show_selected);
  connect(model_, &QAbstractItemModel::modelReset, this, &HistoryTab::update_sources);
  connect(source_, &QComboBox::currentIndexChanged, this,
          [this](int index) { model_->set_source_filter(source_->itemData(index).toString()); });
  connect(model_, &HistoryModel::error_changed, this, [this](const QString& error) {
    status_->setText(error.isEmpty() ? QString() : tr("History unavailable: %1").arg(error));
  });
  connect(rerun_, &QPushButton::clicked, this, &HistoryTab::rerun_selected);
  connect(delete_, &QPushButton::clicked, this, &HistoryTab::delete_selected);
}

bool HistoryTab::open(const std::filesystem::path& path) {
  const bool opened = model_->open(path);
  table_->sortByColumn(table_->horizontalHeader()->sortIndicatorSection(),
                       table_->horizontalHeader()->sortIndicatorOrder());
  if (opened) status_->setText(tr("%1").arg(QString::fromStdString(path.string())));
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

void HistoryTab::update_sources() {
  QStringList wanted = model_->sources();
  const QString chosen = model_->source_filter();
  // The chosen source stays offered even when its last run was deleted.
  if (!chosen.isEmpty() && !wanted.contains(chosen)) wanted << chosen;
  QStringList have;
  for (int i = 1; i < source_->count(); ++i) have << source_->itemData(i).toString();
  if (have == wanted) return;
  const QSignalBlocker quiet(source_);  // the filter itself does not change here
  while (source_->count() > 1) source_->removeItem(1);
  for (const QString& source : wanted) source_->addItem(source, source);
  source_->setCurrentIndex(std::max(0, source_->findData(chosen)));
}

int HistoryTab::selected_row() const {
  const auto rows = table_->selectionModel()->selectedRows();
  return rows.isEmpty() ? -1 : rows.first().row();
}

void HistoryTab::select_row(int row) { table_->selectRow(row); }

void HistoryTab::show_selected() {
  const int row = selected_row();
  rerun_->setEnabled(row >= 0);
  delete_->setEnabled(row >= 0);
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

void HistoryTab::delete_selected() {
  const int row = selected_row();
  if (row >= 0) model_->remove_at(row);
}

}  // namespace cordon::inspector
