// Compare: the Run tab's code and limits on several backends at once, the Results side
// by side with the differences highlighted (CompareModel).
#pragma once

#include <QWidget>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "backend_list.h"
#include "cordon/request.h"
#include "cordon/result.h"

class QListWidget;
class QPushButton;
class QSpinBox;
class QTableView;
class QComboBox;
class QLabel;
class QPlainTextEdit;

namespace cordon::inspector {

class CompareModel;
class RunController;

class CompareTab : public QWidget {
  Q_OBJECT

 public:
  // `request` gives the Run tab's current request when Compare is pressed.
  CompareTab(BackendListPtr backends, std::function<RunRequest()> request,
             QWidget* parent = nullptr);

  void set_history_path(std::optional<std::filesystem::path> path);
  // Ticks exactly these backends (the available ones among them).
  void check_backends(const QStringList& names);
  // Ticks exactly these environments ("host" and stored names); host alone by default.
  // Every ticked backend runs in every ticked environment, one column each.
  void check_environments(const QStringList& names);
  // Reads the environment store again; ticked environments that still exist stay ticked.
  void refresh_environments();
  [[nodiscard]] CompareModel* model() const { return model_; }
  // The two columns the diff pane compares, and its text.
  void choose_diff(int left, int right);
  [[nodiscard]] QString diff_text() const;
  [[nodiscard]] bool running() const;
  // How many times each backend runs (timings are shown as median and spread).
  [[nodiscard]] QSpinBox* repeats_box() const { return repeats_; }

 public slots:
  void compare();

 signals:
  void compared();  // every column has its Result
  // A column was double-clicked: that backend's full Result, for the Result view.
  void open_result(const cordon::RunResult& result);

 private:
  // The store's environments as a checklist, `ticked` ticked.
  void fill_environments(const QStringList& ticked);
  void finish_if_complete();
  // Starts the column's next run; a backend that cannot start ends its column.
  void start_column(int column);
  // The line diff of the two chosen columns' stdout and stderr, in the diff pane.
  void update_diff();

  BackendListPtr backends_;
  std::function<RunRequest()> request_;
  std::optional<std::filesystem::path> history_path_;
  QListWidget* choices_;
  QListWidget* environments_;
  std::vector<BackendListPtr> column_backends_;  // each column's backends (its environment)
  EnvironmentLists lists_;
  QPushButton* run_;
  QSpinBox* repeats_;
  QTableView* table_;
  QLabel* status_;
  QComboBox* left_;
  QComboBox* right_;
  QPlainTextEdit* diff_;
  CompareModel* model_;
  std::vector<RunController*> controllers_;
  RunRequest last_request_;  // what every repeat of the current Compare runs
};

}  // namespace cordon::inspector
