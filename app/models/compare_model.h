// Compare: one column per backend, one row per aspect of the Result (outcome, exit code,
// signal, stdout, stderr, wall / set-up / CPU time). A row whose values differ between
// the finished columns is highlighted; timings count as different when one is more than
// twice another (plus a few ms), since no two runs take exactly as long.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <optional>
#include <vector>

#include "cordon/result.h"

namespace cordon::inspector {

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Row { kOutcome, kExitCode, kSignal, kStdout, kStderr, kWall, kSetup, kCpu, kRowCount };
  static inline const QColor kDifferent{0xff, 0xe0, 0x82};

  explicit CompareModel(QObject* parent = nullptr);

  // New columns, each waiting for its result.
  void set_backends(const QStringList& backends);
  [[nodiscard]] QStringList backends() const { return backends_; }
  void set_result(int column, const RunResult& result);
  // The column's result once it has come back (for a caller that wants more than the cells).
  [[nodiscard]] const std::optional<RunResult>& result(int column) const {
    return results_.at(static_cast<std::size_t>(column));
  }
  [[nodiscard]] bool complete() const;
  // Whether the finished columns disagree on this row.
  [[nodiscard]] bool differs(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role) const override;

 private:
  [[nodiscard]] QString cell(int row, const RunResult& result) const;

  QStringList backends_;
  std::vector<std::optional<RunResult>> results_;
};

}  // namespace cordon::inspector
