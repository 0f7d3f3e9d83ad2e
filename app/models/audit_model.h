// Audit: the escape-audit matrix — one row per attempt (id, class, aspect), one column per
// backend holding its verdict (BLOCKED, ESCAPED, ERROR, SKIPPED; "!" when it escaped what
// the backend claims to stop), the evidence and control as the cell's tooltip. Filled
// attempt by attempt while an audit runs, or from a stored report.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit/verdict.h"

namespace cordon::inspector {

class AuditModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kAttempt, kClass, kAspect, kFirstBackend };

  explicit AuditModel(QObject* parent = nullptr);

  // Empties the matrix: these backends' columns, no rows yet.
  void reset(const QStringList& backends);
  // A verdict of `backend` (one of reset()'s): fills its cell, adding the row if new.
  void add_verdict(const QString& backend, const audit::AttemptVerdict& verdict);

  [[nodiscard]] QStringList backends() const { return backends_; }
  [[nodiscard]] const audit::AttemptVerdict* verdict(int row, const QString& backend) const;
  [[nodiscard]] int row_of(const QString& attempt) const;
  // The evidence of every backend for the attempt in `row`, one line each.
  [[nodiscard]] QString evidence(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role) const override;

 private:
  struct Row {
    audit::AttemptVerdict first;  // id, class, aspect
    std::map<QString, audit::AttemptVerdict> by_backend;
  };

  QStringList backends_;
  std::vector<Row> rows_;
};

// "BLOCKED", "ESCAPED!" (an escape the backend claims to stop), ...
[[nodiscard]] QString verdict_cell(const audit::AttemptVerdict& verdict);

}  // namespace cordon::inspector
