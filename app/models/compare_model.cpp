#include "compare_model.h"

#include <QCoreApplication>
#include <QMap>
#include <algorithm>
#include <string_view>

#include "outcome_badge.h"

namespace cordon::inspector {
namespace {

// How core reports a request the backend cannot honour (run_driver.cpp, check_request).
constexpr std::string_view kRefusalPrefix = "invalid request: ";

bool refused(const RunResult& result) {
  return result.outcome == Outcome::kSandboxError && result.error &&
         result.error->starts_with(kRefusalPrefix);
}

QString size_text(std::int64_t kib) {
  if (kib < 10 * 1024) return QStringLiteral("%1 KiB").arg(kib);
  return QStringLiteral("%1 MiB").arg(static_cast<double>(kib) / 1024.0, 0, 'f', 1);
}

QString text_of(const std::string& bytes, bool truncated) {
  QString text = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
  // A final newline is how output ends, not a line of its own in the cell.
  if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
  if (truncated) text += QCoreApplication::translate("CompareModel", "\n[truncated]");
  return text;
}

QString enforced_text(Aspect aspect, const RunResult& result) {
  QStringList parts;
  for (const Enforced& enforced : result.enforced) {
    if (enforced.aspect != aspect) continue;
    QString part = QString::fromStdString(enforced.mechanism);
    if (enforced.value) part += QStringLiteral(" ") + QString::fromStdString(*enforced.value);
    parts << part;
  }
  return parts.isEmpty() ? QCoreApplication::translate("CompareModel", "not enforced")
                         : parts.join(QStringLiteral("; "));
}

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

void CompareModel::set_backends(const QStringList& backends, int repeats,
                                const QStringList& labels) {
  beginResetModel();
  backends_ = backends;
  labels_ = labels.size() == backends.size() ? labels : backends;
  repeats_ = std::max(repeats, 1);
  results_.assign(static_cast<std::size_t>(backends.size()), std::nullopt);
  runs_.assign(static_cast<std::size_t>(backends.size()), {});
  endResetModel();
}

void CompareModel::set_result(int column, const RunResult& result) {
  if (column < 0 || column >= static_cast<int>(results_.size())) return;
  results_[static_cast<std::size_t>(column)] = result;
  runs_[static_cast<std::size_t>(column)] = {result};
  // Highlighting of every row may change with a new column, so all cells change.
  emit dataChanged(index(0, 0), index(kRowCount - 1, columnCount() - 1));
}

void CompareModel::add_result(int column, const RunResult& result) {
  if (column < 0 || column >= static_cast<int>(results_.size())) return;
  auto& first = results_[static_cast<std::size_t>(column)];
  if (!first) first = result;
  runs_[static_cast<std::size_t>(column)].push_back(result);
  emit dataChanged(index(0, 0), index(kRowCount - 1, columnCount() - 1));
}

bool CompareModel::wants_more(int column) const {
  if (column < 0 || column >= static_cast<int>(results_.size())) return false;
  const auto& first = results_[static_cast<std::size_t>(column)];
  // A sandbox that failed or refused once has nothing to time: it is not asked again.
  if (first && first->outcome == Outcome::kSandboxError) return false;
  return static_cast<int>(runs_[static_cast<std::size_t>(column)].size()) < repeats_;
}

bool CompareModel::complete() const {
  for (int column = 0; column < static_cast<int>(results_.size()); ++column) {
    if (!results_[static_cast<std::size_t>(column)] || wants_more(column)) return false;
  }
  return true;
}

QString CompareModel::timing_summary(int row, int column) const {
  const auto& runs = runs_[static_cast<std::size_t>(column)];
  std::vector<std::int64_t> measured;
  for (const RunResult& run : runs) {
    if (const auto value = timing(row, run)) measured.push_back(*value);
  }
  if (measured.empty()) return tr("not measured");
  std::ranges::sort(measured);
  const std::size_t n = measured.size();
  // The median of an even count is the mean of the middle two, rounded down.
  const std::int64_t median = (measured[(n - 1) / 2] + measured[n / 2]) / 2;
  QString text = tr("median %1 ms (%2–%3)").arg(median).arg(measured.front()).arg(measured.back());
  if (n < runs.size()) text += tr(", %1 not measured").arg(runs.size() - n);
  return text;
}

QString CompareModel::repeats_note(int column) const {
  const auto& runs = runs_[static_cast<std::size_t>(column)];
  if (runs.size() < 2) return {};
  QMap<QString, int> counts;
  for (const RunResult& run : runs) {
    ++counts[outcome_badge(run.outcome, run.limit, run.exit_code, run.signal).text];
  }
  if (counts.size() < 2) return {};
  QStringList parts;
  for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
    parts << QStringLiteral("%1 × %2").arg(it.value()).arg(it.key());
  }
  return tr("\nrepeats disagree: %1").arg(parts.join(QStringLiteral(", ")));
}

bool CompareModel::differs(int row) const {
  std::vector<const RunResult*> done;
  for (const auto& result : results_) {
    if (result) done.push_back(&*result);
  }
  if (done.size() < 2) return false;
  // Timings and memory vary from run to run: a difference there is noise, not news.
  if (row == kWall || row == kSetup || row == kCpu || row == kMemory || row == kLargestProcess) {
    return false;
  }
  const QString first = cell(row, *done.front());
  return std::any_of(done.begin(), done.end(),
                     [&](const RunResult* result) { return cell(row, *result) != first; });
}

QString CompareModel::cell(int row, const RunResult& result) const {
  if (row >= kEnforcedFirst) return enforced_text(kAllAspects[row - kEnforcedFirst], result);
  switch (row) {
    case kOutcome:
      if (refused(result)) {
        return tr("REFUSED: %1")
            .arg(QString::fromStdString(result.error->substr(kRefusalPrefix.size())));
      }
      if (result.outcome == Outcome::kSandboxError && result.error) {
        return tr("SANDBOX ERROR: %1").arg(QString::fromStdString(*result.error));
      }
      return outcome_badge(result.outcome, result.limit, result.exit_code, result.signal).text;
    case kExitCode:
      // -1 is "did not exit": a signal, a timeout, a sandbox that never started the code.
      return result.exit_code < 0 ? tr("none") : QString::number(result.exit_code);
    case kSignal:
      return result.signal == 0 ? tr("none") : QString::number(result.signal);
    case kStdout:
      return text_of(result.stdout_data, result.stdout_truncated);
    case kStderr:
      return text_of(result.stderr_data, result.stderr_truncated);
    case kMemory: {
      if (!result.memory_peak_kb) return tr("not measured");
      QString text = size_text(*result.memory_peak_kb);
      if (limits_.memory_bytes) {
        text +=
            tr(" of %1").arg(size_text(static_cast<std::int64_t>(*limits_.memory_bytes / 1024)));
      }
      return text;
    }
    case kLargestProcess:
      return result.max_rss_kb ? size_text(*result.max_rss_kb) : tr("not measured");
    case kProcesses: {
      const QString limit =
          limits_.max_processes ? tr("limit %1").arg(*limits_.max_processes) : tr("no limit");
      return result.limit == LimitKind::kProcesses ? tr("hit the %1").arg(limit) : limit;
    }
    case kTruncated:
      if (result.stdout_truncated && result.stderr_truncated) return tr("stdout and stderr");
      if (result.stdout_truncated) return tr("stdout");
      if (result.stderr_truncated) return tr("stderr");
      return tr("no");
    default: {
      const auto value = timing(row, result);
      return value ? QStringLiteral("%1 ms").arg(*value) : tr("not measured");
    }
  }
}

QString CompareModel::display(int row, int column, const RunResult& first) const {
  // Several runs: timings as median and spread; everything else is the first run's, with
  // a note on the outcome when the repeats did not all end alike.
  if (runs_[static_cast<std::size_t>(column)].size() > 1) {
    if (row == kWall || row == kSetup || row == kCpu) return timing_summary(row, column);
    if (row == kOutcome) return cell(row, first) + repeats_note(column);
  }
  return cell(row, first);
}

QVariant CompareModel::background(int row, const RunResult& result) const {
  // The outcome reads like the Result badge; a refusal is not the sandbox failing.
  if (row == kOutcome) {
    if (refused(result)) return kRefused;
    return outcome_badge(result.outcome, result.limit, result.exit_code, result.signal).color;
  }
  return differs(row) ? QVariant(kDifferent) : QVariant();
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
    case Qt::ToolTipRole:
      return result ? display(index.row(), index.column(), *result)
                    : (role == Qt::DisplayRole ? QVariant(tr("running…")) : QVariant());
    case Qt::BackgroundRole:
      return result ? background(index.row(), *result) : QVariant();
    case Qt::ForegroundRole:
      // The badge colours are dark: white text on them, as on the Result badge.
      return result && index.row() == kOutcome ? QVariant(QColor(Qt::white)) : QVariant();
    default:
      return {};
  }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  if (orientation == Qt::Horizontal) {
    return section >= 0 && section < labels_.size() ? labels_.at(section) : QVariant();
  }
  static const char* const kNames[] = {
      QT_TR_NOOP("Outcome"),         QT_TR_NOOP("Exit code"), QT_TR_NOOP("Signal"),
      QT_TR_NOOP("Stdout"),          QT_TR_NOOP("Stderr"),    QT_TR_NOOP("Wall time"),
      QT_TR_NOOP("Set-up"),          QT_TR_NOOP("CPU time"),  QT_TR_NOOP("Memory peak"),
      QT_TR_NOOP("Largest process"), QT_TR_NOOP("Processes"), QT_TR_NOOP("Truncated")};
  if (section >= kEnforcedFirst && section < kRowCount) {
    const std::string_view name = to_string(kAllAspects[section - kEnforcedFirst]);
    return tr("Enforced: %1")
        .arg(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
  }
  return section >= 0 && section < kEnforcedFirst ? tr(kNames[section]) : QVariant();
}

}  // namespace cordon::inspector
