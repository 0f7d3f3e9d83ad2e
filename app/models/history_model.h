// The history as a sortable, searchable table (time, backend, environment, outcome,
// duration, source with the MCP client, a one-line preview of the code), filterable by
// source and by environment, over the core's HistoryStore. Sorting, searching and filtering
// are done by the store's query, so the model only ever holds one page of summaries.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <filesystem>
#include <optional>
#include <vector>

#include "frontend/history.h"

namespace cordon::inspector {

class HistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kTime, kBackend, kEnvironment, kOutcome, kDuration, kSource, kCode, kColumnCount };
  static constexpr std::int64_t kPageSize = 1000;

  explicit HistoryModel(QObject* parent = nullptr);

  // Opens the store at `path`; false with error() set when it cannot be opened (the
  // model is then empty, and the rest of the inspector works as before).
  bool open(const std::filesystem::path& path);
  [[nodiscard]] QString error() const { return error_; }
  [[nodiscard]] bool is_open() const { return store_.has_value(); }

  void set_search(const QString& text);
  // Only runs of this source ("cli", "inspector", "mcp", ...); empty: every source.
  void set_source_filter(const QString& source);
  [[nodiscard]] QString source_filter() const { return QString::fromStdString(query_.source); }
  // The sources of the stored runs, sorted (what the filter offers); empty when closed.
  [[nodiscard]] QStringList sources() const;
  // Only runs in this environment: a name, or an unregistered --rootfs's digest (as
  // environments() lists them); empty: every environment.
  void set_environment_filter(const QString& environment);
  [[nodiscard]] QString environment_filter() const {
    return QString::fromStdString(query_.environment);
  }
  // The environments of the stored runs, sorted (what the filter offers); empty when closed.
  [[nodiscard]] QStringList environments() const;
  // Only the calls of this session (its id), in call order; empty: every run (issue #41).
  void set_session_filter(const QString& session);
  [[nodiscard]] QString session_filter() const { return QString::fromStdString(query_.session); }
  // The session of the run at `row` ("" for a one-shot run).
  [[nodiscard]] QString session_at(int row) const;
  // How the Environment column shows `environment`: its name; "--rootfs sha256:<12 hex>…"
  // for an unregistered one (a digest alone is too long for a column); empty for none.
  [[nodiscard]] static QString environment_text(const std::optional<EnvironmentRef>& environment);
  // How the filter shows one of environments(): a name as it is, a digest as the column
  // shows an unregistered one.
  [[nodiscard]] static QString environment_filter_text(const QString& environment);
  // Backends that isolate nothing: the Backend column says "(no isolation)" after their
  // name, as every other list of the inspector does.
  void set_unisolated_backends(const QStringList& names);
  void refresh();

  [[nodiscard]] std::int64_t id_at(int row) const;
  [[nodiscard]] std::optional<history::RunRecord> record_at(int row) const;
  // Deletes the run at `row` from the store, then refreshes.
  bool remove_at(int row);
  // Stores `record` again (the undo of a delete: same run, a new id), then refreshes.
  // Returns the new id, 0 when it could not be stored (error() says why).
  std::int64_t restore(const history::RunRecord& record);
  // The row of the most recently started run listed, -1 when none.
  [[nodiscard]] int newest_row() const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 signals:
  void error_changed(const QString& error);

 private:
  QStringList unisolated_;
  void set_error(QString error);

  std::optional<history::HistoryStore> store_;
  history::Query query_;
  std::vector<history::RunSummary> rows_;
  QString error_;
};

}  // namespace cordon::inspector
