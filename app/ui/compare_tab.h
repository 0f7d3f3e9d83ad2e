// Compare: the Run tab's code and limits on several backends at once, the Results side
// by side with the differences highlighted (CompareModel).
#pragma once

#include <QWidget>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "backend_list.h"
#include "cordon/request.h"

class QListWidget;
class QPushButton;
class QTableView;
class QLabel;

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
  [[nodiscard]] CompareModel* model() const { return model_; }
  [[nodiscard]] bool running() const;

 public slots:
  void compare();

 signals:
  void compared();  // every column has its Result

 private:
  void finish_if_complete();

  BackendListPtr backends_;
  std::function<RunRequest()> request_;
  std::optional<std::filesystem::path> history_path_;
  QListWidget* choices_;
  QPushButton* run_;
  QTableView* table_;
  QLabel* status_;
  CompareModel* model_;
  std::vector<RunController*> controllers_;
};

}  // namespace cordon::inspector
