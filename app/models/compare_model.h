// Compare: one column per backend, one row per aspect of the Result (outcome, exit code,
// signal, full stdout and stderr, timings, memory, processes, truncation, and the isolation
// enforced per aspect). A row whose values differ between the finished columns is
// highlighted, but only where a difference means something: outcome, exit, output,
// truncation, enforcement. Timings and memory always differ a little between two runs, so
// they are never highlighted. The outcome cell carries the Result badge's colour, and a
// sandbox error or a refused request its reason.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <iterator>
#include <optional>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/request.h"
#include "cordon/result.h"

namespace cordon::inspector {

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Row {
    kOutcome,
    kExitCode,
    kSignal,
    kStdout,
    kStderr,
    kWall,
    kSetup,
    kCpu,
    kMemory,
    kLargestProcess,
    kProcesses,
    kTruncated,
    kEnforcedFirst,  // then one row per aspect, in kAllAspects order
    kRowCount = kEnforcedFirst + static_cast<int>(std::size(kAllAspects)),
  };
  static inline const QColor kDifferent{0xff, 0xe0, 0x82};
  // A refused request: the backend said no before running anything (grey-blue, not the
  // sandbox error's colour).
  static inline const QColor kRefused{0x60, 0x6f, 0x80};

  explicit CompareModel(QObject* parent = nullptr);

  // New columns, each waiting for its result.
  void set_backends(const QStringList& backends);
  // The request the columns ran: its limits are what "of the limit" refers to.
  void set_limits(const Limits& limits) { limits_ = limits; }
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
  [[nodiscard]] QVariant background(int row, const RunResult& result) const;

  QStringList backends_;
  Limits limits_;
  std::vector<std::optional<RunResult>> results_;
};

}  // namespace cordon::inspector
