#include "compare_model.h"

#include <algorithm>

#include "outcome_badge.h"

namespace cordon::inspector {
namespace {

constexpr std::int64_t kTimingSlackMs = 5;

// Wall and set-up time are always measured; CPU time may not be (result.h).
std::optional<std::int64_t> timing(int row, const RunResult& result) {
  switch (row) {
    case CompareModel::kWall:
      return result.wall_ms;
    case CompareModel::kSetup:
      return result.setup_ms;
    default:
      return result.cpu_ms;
  }
}

}  // namespace

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareModel::set_backends(const QStringList& backends) {
  beginResetModel();
  backends_ = backends;
  results_.assign(static_cast<std::size_t>(backends.size()), std::nullopt);
  endResetModel();
}

void CompareModel::set_result(int column, const RunResult& result) {
  if (column < 0 || column >= static_cast<int>(results_.size())) return;
  results_[static_cast<std::size_t>(column)] = result;
  // Highlighting of every row may change with a new column, so all cells change.
  emit dataChanged(index(0, 0), index(kRowCount - 1, columnCount() - 1));
}

bool CompareModel::complete() const {
  return std::all_of(results_.begin(), results_.end(),
                     [](const auto& result) { return result.has_value(); });
}

bool CompareModel::differs(int row) const {
  std::vector<const RunResult*> done;
  for (const auto& result : results_) {
    if (result) done.push_back(&*result);
  }
  if (done.size() < 2) return false;
  if (row == kWall || row == kSetup || row == kCpu) {
    std::vector<std::int64_t> measured;
    for (const RunResult* result : done) {
      if (const auto value = timing(row, *result)) measured.push_back(*value);
    }
    // A figure beside one not measured differs; two not measured do not.
    if (measured.size() != done.size()) return !measured.empty();
    const auto [low, high] = std::ranges::minmax(measured);
    return high > 2 * low + kTimingSlackMs;
  }
  const QString first = cell(row, *done.front());
  return std::any_of(done.begin(), done.end(),
                     [&](const RunResult* result) { return cell(row, *result) != first; });
}

QString CompareModel::cell(int row, const RunResult& result) const {
  switch (row) {
    case kOutcome:
      return outcome_badge(result.outcome, result.limit, result.exit_code, result.signal).text;
    case kExitCode:
      return QString::number(result.exit_code);
    case kSignal:
      return QString::number(result.signal);
    case kStdout:
      return QString::fromUtf8(result.stdout_data.data(),
                               static_cast<qsizetype>(result.stdout_data.size()));
    case kStderr:
      return QString::fromUtf8(result.stderr_data.data(),
                               static_cast<qsizetype>(result.stderr_data.size()));
    default: {
      const auto value = timing(row, result);
      return value ? QStringLiteral("%1 ms").arg(*value) : tr("not measured");
    }
  }
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kRowCount;
}

int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(backends_.size());
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto& result = results_[static_cast<std::size_t>(index.column())];
  switch (role) {
    case Qt::DisplayRole:
      if (!result) return tr("running…");
      {
        // One line in the cell, "…" when there is more; the tooltip has all of it.
        const QString text = cell(index.row(), *result);
        const QString first = text.section(QLatin1Char('\n'), 0, 0);
        return text.trimmed().size() > first.size() ? first + QStringLiteral(" …") : first;
      }
    case Qt::ToolTipRole:
      return result ? cell(index.row(), *result) : QVariant();
    case Qt::BackgroundRole:
      return differs(index.row()) ? QVariant(kDifferent) : QVariant();
    default:
      return {};
  }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  if (orientation == Qt::Horizontal) {
    return section >= 0 && section < backends_.size() ? backends_.at(section) : QVariant();
  }
  static const char* const kNames[] = {
      QT_TR_NOOP("Outcome"), QT_TR_NOOP("Exit code"), QT_TR_NOOP("Signal"), QT_TR_NOOP("Stdout"),
      QT_TR_NOOP("Stderr"),  QT_TR_NOOP("Wall time"), QT_TR_NOOP("Set-up"), QT_TR_NOOP("CPU time")};
  return section >= 0 && section < kRowCount ? tr(kNames[section]) : QVariant();
}

}  // namespace cordon::inspector
