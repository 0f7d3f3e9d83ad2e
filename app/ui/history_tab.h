// History: the searchable, sortable list of every recorded run (CLI, inspector, MCP),
// filterable by source and by environment; selecting one shows its Result, Re-run loads
// it into the Run tab, Delete removes it.
#pragma once

#include <QWidget>
#include <filesystem>

#include "frontend/history.h"

class QComboBox;
class QLineEdit;
class QTableView;
class QPushButton;
class QLabel;

namespace cordon::inspector {

class HistoryModel;
class ResultView;

class HistoryTab : public QWidget {
  Q_OBJECT

 public:
  explicit HistoryTab(QWidget* parent = nullptr);

  // Opens the store; a failure shows the reason in the tab and nothing else changes.
  bool open(const std::filesystem::path& path);
  void refresh();

  [[nodiscard]] HistoryModel* model() const { return model_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  [[nodiscard]] ResultView* result_view() const { return result_; }
  [[nodiscard]] QLineEdit* search_box() const { return search_; }
  // "All sources", then each source present in the history.
  [[nodiscard]] QComboBox* source_box() const { return source_; }
  // "All environments", then each environment present in the history (item data: the
  // name, or an unregistered --rootfs's digest).
  [[nodiscard]] QComboBox* environment_box() const { return environment_; }
  void select_row(int row);
  // Re-run: the selected run's code and settings into the Run tab, and run them there.
  void rerun_selected();
  // The same without running (to edit first).
  void load_selected();
  // Deletes the selected run; Undo (undo_delete()) stores it again until the next delete.
  void delete_selected();
  void undo_delete();
  [[nodiscard]] QPushButton* undo_button() const { return undo_; }
  // Checked: only the selected run's session, its calls in order (issue #41).
  [[nodiscard]] QPushButton* session_button() const { return session_; }

 signals:
  void rerun(const cordon::history::RunRecord& record);
  void load(const cordon::history::RunRecord& record);

 private:
  [[nodiscard]] int selected_row() const;
  void show_selected();
  // Refills the source and environment filters from the history, keeping the chosen ones.
  void update_filters();

  HistoryModel* model_;
  QLineEdit* search_;
  QComboBox* source_;
  QComboBox* environment_;
  QTableView* table_;
  ResultView* result_;
  QPushButton* rerun_;
  QPushButton* load_;
  QPushButton* delete_;
  QPushButton* undo_;
  QPushButton* session_;
  std::optional<cordon::history::RunRecord> deleted_;  // what Undo stores again
  QLabel* status_;
};

}  // namespace cordon::inspector
