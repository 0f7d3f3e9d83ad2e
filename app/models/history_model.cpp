#include "history_model.h"

#include <QDateTime>
#include <QLocale>
#include <iterator>

#include "outcome_badge.h"

namespace cordon::inspector {
namespace {

QStringList to_strings(const std::vector<std::string>& values) {
  QStringList out;
  out.reserve(static_cast<qsizetype>(values.size()));
  for (const std::string& value : values) out << QString::fromStdString(value);
  return out;
}

}  // namespace

HistoryModel::HistoryModel(QObject* parent) : QAbstractTableModel(parent) {
  query_.limit = kPageSize;
}

bool HistoryModel::open(const std::filesystem::path& path) {
  beginResetModel();
  rows_.clear();
  store_.reset();
  Result<history::HistoryStore> store = history::HistoryStore::open(path);
  endResetModel();
  if (!store) {
    set_error(QString::fromStdString(store.error().describe()));
    return false;
  }
  store_.emplace(std::move(*store));
  set_error({});
  refresh();
  return true;
}

void HistoryModel::set_error(QString error) {
  if (error == error_) return;
  error_ = std::move(error);
  emit error_changed(error_);
}

void HistoryModel::set_search(const QString& text) {
  query_.search = text.toStdString();
  refresh();
}

void HistoryModel::set_source_filter(const QString& source) {
  query_.source = source.toStdString();
  refresh();
}

void HistoryModel::set_unisolated_backends(const QStringList& names) {
  beginResetModel();
  unisolated_ = names;
  endResetModel();
}

QStringList HistoryModel::sources() const {
  if (!store_) return {};
  // A failure here leaves the filter with what it has; the list's own error is shown.
  return to_strings(store_->sources().value_or(std::vector<std::string>{}));
}

void HistoryModel::set_environment_filter(const QString& environment) {
  query_.environment = environment.toStdString();
  refresh();
}

void HistoryModel::set_session_filter(const QString& session) {
  query_.session = session.toStdString();
  refresh();
}

QString HistoryModel::session_at(int row) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return {};
  const auto& session = rows_[static_cast<std::size_t>(row)].session;
  return session ? QString::fromStdString(session->id) : QString();
}

QStringList HistoryModel::environments() const {
  if (!store_) return {};
  return to_strings(store_->environments().value_or(std::vector<std::string>{}));
}

QString HistoryModel::environment_text(const std::optional<EnvironmentRef>& environment) {
  if (!environment) return {};
  if (!environment->name.empty()) return QString::fromStdString(environment->name);
  // "sha256:" and 12 hex digits: as many as git's short ids, enough to tell trees apart.
  constexpr qsizetype kShownHex = 12;
  const QString digest = QString::fromStdString(environment->digest);
  const qsizetype shown = digest.indexOf(QLatin1Char(':')) + 1 + kShownHex;
  return QStringLiteral("--rootfs ") +
         (digest.size() > shown ? digest.left(shown) + QStringLiteral("\u2026") : digest);
}

QString HistoryModel::environment_filter_text(const QString& environment) {
  // A stored environment's name has no ':' (environment::Store::check_name), a digest
  // always has one ("sha256:<hex>"): the filter's values are told apart by it.
  if (!environment.contains(QLatin1Char(':'))) return environment;
  return environment_text(EnvironmentRef{.name = "", .digest = environment.toStdString()});
}

void HistoryModel::refresh() {
  if (!store_) return;
  auto rows = store_->list(query_);
  beginResetModel();
  if (rows) {
    rows_ = std::move(*rows);
  } else {
    rows_.clear();
  }
  endResetModel();
  set_error(rows ? QString() : QString::fromStdString(rows.error().describe()));
}

std::int64_t HistoryModel::id_at(int row) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return 0;
  return rows_[static_cast<std::size_t>(row)].id;
}

std::optional<history::RunRecord> HistoryModel::record_at(int row) const {
  const std::int64_t id = id_at(row);
  if (id == 0 || !store_) return std::nullopt;
  auto record = store_->get(id);
  if (!record) return std::nullopt;
  return std::move(*record);
}

bool HistoryModel::remove_at(int row) {
  const std::int64_t id = id_at(row);
  if (id == 0 || !store_) return false;
  const Status removed = store_->remove(id);
  if (!removed) set_error(QString::fromStdString(removed.error().describe()));
  refresh();
  return removed.has_value();
}

std::int64_t HistoryModel::restore(const history::RunRecord& record) {
  if (!store_) return 0;
  const Result<std::int64_t> added = store_->add(record);
  if (!added) set_error(QString::fromStdString(added.error().describe()));
  refresh();
  return added.value_or(0);
}

int HistoryModel::newest_row() const {
  int newest = -1;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (newest < 0 || rows_[i].started > rows_[static_cast<std::size_t>(newest)].started) {
      newest = static_cast<int>(i);
    }
  }
  return newest;
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const history::RunSummary& row = rows_[static_cast<std::size_t>(index.row())];
  const Badge badge = outcome_badge(row.outcome, row.limit, row.exit_code, 0);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kTime:
        return QDateTime::fromMSecsSinceEpoch(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  row.started.time_since_epoch())
                                                  .count())
            .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
      case kBackend: {
        const QString name = QString::fromStdString(row.backend);
        return unisolated_.contains(name) ? tr("%1 (no isolation)").arg(name) : name;
      }
      case kEnvironment:
        return environment_text(row.environment);
      case kOutcome:
        // The list has no signal number; the Result view shows it.
        return row.outcome == Outcome::kSignaled ? QStringLiteral("SIGNALED") : badge.text;
      case kDuration:
        return QStringLiteral("%1 ms").arg(row.wall_ms);
      case kSource: {
        // An MCP run names its client ("mcp (claude-code 1.0)"): several agents may share
        // one server's history. A session's call says its index, so that a session's calls
        // read in order ("inspector · call 2").
        QString from = row.client.empty()
                           ? QString::fromStdString(row.source)
                           : QStringLiteral("%1 (%2)").arg(QString::fromStdString(row.source),
                                                           QString::fromStdString(row.client));
        if (row.session) from = tr("%1 · call %2").arg(from).arg(row.session->call);
        return from;
      }
      case kCode:
        return QString::fromStdString(row.preview);
      default:
        return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kOutcome) return badge.color;
  if (role == Qt::ToolTipRole && index.column() == kCode) {
    return QString::fromStdString(row.preview);
  }
  if (role == Qt::ToolTipRole && index.column() == kEnvironment && row.environment &&
      !row.environment->digest.empty()) {
    return QString::fromStdString(row.environment->digest);  // the column shows it cut
  }
  if (role == Qt::ToolTipRole && index.column() == kSource && row.session) {
    return tr("call %1 of session %2")
        .arg(row.session->call)
        .arg(QString::fromStdString(row.session->id));
  }
  if (role == Qt::ToolTipRole && index.column() == kSource && !row.client.empty()) {
    return tr("MCP client: %1").arg(QString::fromStdString(row.client));
  }
  if (role == Qt::UserRole) return QVariant::fromValue<qint64>(row.id);
  return {};
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  static const char* const kNames[] = {QT_TR_NOOP("Time"),        QT_TR_NOOP("Backend"),
                                       QT_TR_NOOP("Environment"), QT_TR_NOOP("Outcome"),
                                       QT_TR_NOOP("Duration"),    QT_TR_NOOP("From"),
                                       QT_TR_NOOP("Code")};
  static_assert(std::size(kNames) == kColumnCount);
  return section >= 0 && section < kColumnCount ? tr(kNames[section]) : QVariant();
}

void HistoryModel::sort(int column, Qt::SortOrder order) {
  switch (column) {
    case kBackend:
      query_.sort = history::SortKey::kBackend;
      break;
    case kEnvironment:
      query_.sort = history::SortKey::kEnvironment;
      break;
    case kOutcome:
      query_.sort = history::SortKey::kOutcome;
      break;
    case kDuration:
      query_.sort = history::SortKey::kDuration;
      break;
    default:  // time; source and code sort by time too
      query_.sort = history::SortKey::kTime;
      break;
  }
  query_.descending = order == Qt::DescendingOrder;
  refresh();  // a reset: the rows are a new page from the store
}

}  // namespace cordon::inspector
