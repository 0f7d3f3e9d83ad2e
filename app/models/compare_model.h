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

  // New columns, each waiting for `repeats` runs.
  // `labels`: the column headers ("subprocess (no isolation)"); empty: the names.
  void set_backends(const QStringList& backends, int repeats = 1, const QStringList& labels = {});
  [[nodiscard]] int repeats() const { return repeats_; }
  // The request the columns ran: its limits are what "of the limit" refers to.
  void set_limits(const Limits& limits) { limits_ = limits; }
  [[nodiscard]] QStringList backends() const { return backends_; }
  // The column's only result (any earlier runs of it dropped).
  void set_result(int column, const RunResult& result);
  // One more run of the column. The first run's outcome and output are the column's;
  // timings show the median and min–max of every run.
  void add_result(int column, const RunResult& result);
  // Whether the column should run again: fewer runs than asked, and the sandbox worked.
  [[nodiscard]] bool wants_more(int column) const;
  [[nodiscard]] int runs(int column) const {
    return static_cast<int>(runs_.at(static_cast<std::size_t>(column)).size());
  }
  // The column's (first) result once it has come back (for a caller that wants more than the
  // cells).
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
  [[nodiscard]] QString display(int row, int column, const RunResult& first) const;
  [[nodiscard]] QString timing_summary(int row, int column) const;
  [[nodiscard]] QString repeats_note(int column) const;

  QStringList backends_;
  QStringList labels_;
  Limits limits_;
  std::vector<std::optional<RunResult>> results_;  // each column's first run
  std::vector<std::vector<RunResult>> runs_;       // each column's every run
  int repeats_ = 1;
};

}  // namespace cordon::inspector
