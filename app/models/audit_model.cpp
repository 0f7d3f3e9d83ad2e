#include "audit_model.h"

#include <QBrush>
#include <QColor>

namespace cordon::inspector {
namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QColor status_colour(audit::AttemptStatus status, bool contradicts) {
  switch (status) {
    case audit::AttemptStatus::kBlocked:
      return {0xc8, 0xe6, 0xc9};
    case audit::AttemptStatus::kEscaped:  // red: the attack got out, claimed or not
      return contradicts ? QColor(0xff, 0x8a, 0x80) : QColor(0xff, 0xcd, 0xd2);
    case audit::AttemptStatus::kError:
      return {0xff, 0xcc, 0xbc};
    case audit::AttemptStatus::kSkipped:
      return {0xe0, 0xe0, 0xe0};
  }
  return {};
}

}  // namespace

QString verdict_cell(const audit::AttemptVerdict& verdict) {
  return qs(audit::to_string(verdict.status)) +
         (verdict.contradicts_claim() ? QStringLiteral("!") : QString());
}

AuditModel::AuditModel(QObject* parent) : QAbstractTableModel(parent) {}

void AuditModel::reset(const QStringList& backends) {
  beginResetModel();
  backends_ = backends;
  rows_.clear();
  endResetModel();
}

int AuditModel::row_of(const QString& attempt) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (qs(rows_[i].first.id) == attempt) return static_cast<int>(i);
  }
  return -1;
}

void AuditModel::add_verdict(const QString& backend, const audit::AttemptVerdict& verdict) {
  const auto column = backends_.indexOf(backend);
  if (column < 0) return;
  int row = row_of(qs(verdict.id));
  if (row < 0) {
    row = rowCount();
    beginInsertRows({}, row, row);
    rows_.push_back(Row{.first = verdict, .by_backend = {}});
    endInsertRows();
  }
  rows_[static_cast<std::size_t>(row)].by_backend[backend] = verdict;
  const QModelIndex cell = index(row, kFirstBackend + int(column));
  emit dataChanged(cell, cell);
}

const audit::AttemptVerdict* AuditModel::verdict(int row, const QString& backend) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  const auto& cells = rows_[static_cast<std::size_t>(row)].by_backend;
  const auto it = cells.find(backend);
  return it != cells.end() ? &it->second : nullptr;
}

QString AuditModel::evidence(int row) const {
  QStringList lines;
  for (const QString& backend : backends_) {
    const audit::AttemptVerdict* v = verdict(row, backend);
    if (v == nullptr) continue;
    lines << QStringLiteral("%1: %2 (claims %3) — %4")
                 .arg(backend, verdict_cell(*v), qs(cordon::to_string(v->claimed)),
                      qs(v->evidence));
    if (!v->control.empty()) lines << QStringLiteral("    control: %1").arg(qs(v->control));
  }
  return lines.join(QLatin1Char('\n'));
}

int AuditModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int AuditModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kFirstBackend + static_cast<int>(backends_.size());
}

QVariant AuditModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  if (index.column() < kFirstBackend) {
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
      case kAttempt:
        return qs(row.first.id);
      case kClass:
        return qs(row.first.threat_class);
      default:
        return qs(cordon::to_string(row.first.aspect));
    }
  }
  const audit::AttemptVerdict* v = verdict(index.row(), backends_[index.column() - kFirstBackend]);
  if (v == nullptr) return role == Qt::DisplayRole ? QVariant(QStringLiteral("…")) : QVariant();
  switch (role) {
    case Qt::DisplayRole:
      return verdict_cell(*v);
    case Qt::ToolTipRole:
      return QStringLiteral("%1\ncontrol: %2").arg(qs(v->evidence), qs(v->control));
    case Qt::BackgroundRole:
      return QBrush(status_colour(v->status, v->contradicts_claim()));
    case Qt::ForegroundRole:  // on the light status colours, in any theme
      return QBrush(v->status == audit::AttemptStatus::kEscaped ? QColor(0xb7, 0x1c, 0x1c)
                                                                : QColor(Qt::black));
    default:
      return {};
  }
}

QVariant AuditModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
    case kAttempt:
      return tr("Attempt");
    case kClass:
      return tr("Class");
    case kAspect:
      return tr("Aspect");
    default:
      return section - kFirstBackend < backends_.size() ? backends_[section - kFirstBackend]
                                                        : QVariant();
  }
}

}  // namespace cordon::inspector
