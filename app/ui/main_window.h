// The inspector's window: Run, Result, History, Plan, Compare, Tool description and Audit tabs over
// one backend list; settings (layout, last backend, limits, history path) kept with QSettings.
#pragma once

#include <QMainWindow>
#include <filesystem>
#include <optional>

#include "backend_list.h"

class QTabWidget;
class QAction;

namespace cordon::inspector {

class RunTab;
class ResultView;
class HistoryTab;
class PlanTab;
class CompareTab;
class ToolTab;
class AuditTab;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  enum Tab { kRun, kResult, kHistory, kPlan, kCompare, kTool, kAudit };

  explicit MainWindow(BackendListPtr backends, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Where runs are recorded and the History tab reads: $CORDON_HISTORY_PATH, else the
  // path in the settings, else the default (history.h).
  [[nodiscard]] std::optional<std::filesystem::path> history_path() const;
  [[nodiscard]] bool recording() const;
  void set_recording(bool on);

  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }
  [[nodiscard]] RunTab* run_tab() const { return run_; }
  [[nodiscard]] ResultView* result_view() const { return result_; }
  [[nodiscard]] HistoryTab* history_tab() const { return history_; }
  [[nodiscard]] PlanTab* plan_tab() const { return plan_; }
  [[nodiscard]] CompareTab* compare_tab() const { return compare_; }
  [[nodiscard]] ToolTab* tool_tab() const { return tool_; }
  [[nodiscard]] AuditTab* audit_tab() const { return audit_; }

 protected:
  void changeEvent(QEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void apply_history_settings();
  void update_plan();
  void save_settings() const;
  void open_code();
  void save_code();
  void choose_history_file();

  BackendListPtr backends_;
  QTabWidget* tabs_;
  RunTab* run_;
  ResultView* result_;
  HistoryTab* history_;
  PlanTab* plan_;
  CompareTab* compare_;
  ToolTab* tool_;
  AuditTab* audit_;
  QAction* record_action_ = nullptr;
};

}  // namespace cordon::inspector
