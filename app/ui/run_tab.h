// Run: the editor, language, backend (unavailable ones disabled, the reason as tooltip),
// timeout and limits, Run (Ctrl+Return) and Cancel (Esc), live output (stderr in red, cut
// where the Result's copy is cut) and an elapsed-time bar that ends coloured by outcome.
#pragma once

#include <QWidget>
#include <filesystem>
#include <map>
#include <optional>

#include "backend_list.h"
#include "cordon/request.h"
#include "cordon/result.h"
#include "frontend/history.h"
#include "output_cap.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;
class QPushButton;
class QProgressBar;
class QPlainTextEdit;
class QLabel;
class QSettings;
class QListWidget;
class QLineEdit;
class QSplitter;
class QTimer;

namespace cordon::inspector {

class CodeEditor;
class RunController;
class SparkGraph;

// The backend chooser shared by Run, Plan and Compare: filled from the plugin registry.
void fill_backend_combo(QComboBox* combo, const BackendList& backends);
// The same as a list with a check box per available backend (all ticked), for the tabs
// that work on several at once (Compare, Audit). Item data (Qt::UserRole): the name.
// `labelled`: the text is BackendItem::label() ("subprocess (no isolation)") rather than
// the bare name, for lists read through Qt::UserRole (Compare still reads the text).
void fill_backend_checklist(QListWidget* list, const BackendList& backends, bool labelled = false);

class RunTab : public QWidget {
  Q_OBJECT

 public:
  RunTab(BackendListPtr backends, QWidget* parent = nullptr);

  void set_history_path(std::optional<std::filesystem::path> path);
  // The request as the controls describe it (code, language, timeout, limits, input files
  // read now, artifact globs).
  [[nodiscard]] RunRequest request() const;
  [[nodiscard]] QString backend() const;
  void set_backend(const QString& name);
  // The environment the next run is in: "host" or a stored one's name.
  [[nodiscard]] QString environment() const;
  void set_environment(const QString& name);
  // The backends as they are created for `name` (made once per environment and kept).
  [[nodiscard]] Result<BackendListPtr> backends_in(const QString& name);
  // Reads the environment store again (an environment added or removed meanwhile); the
  // chosen one stays chosen while it exists.
  void refresh_environments();
  void set_code(const QString& code, Language language);
  // Re-run: loads a recorded run's code and settings (no env values: they were never kept).
  void load(const history::RunRecord& record);

  void save_settings(QSettings& settings) const;
  void load_settings(const QSettings& settings);

  // For tests and the screenshot tool.
  [[nodiscard]] CodeEditor* editor() const { return editor_; }
  [[nodiscard]] QPushButton* run_button() const { return run_; }
  [[nodiscard]] QPushButton* cancel_button() const { return cancel_; }
  [[nodiscard]] QDoubleSpinBox* timeout_box() const { return timeout_; }
  [[nodiscard]] QSpinBox* output_cap_box() const { return output_cap_; }
  [[nodiscard]] QComboBox* backend_box() const { return backend_; }
  [[nodiscard]] QPlainTextEdit* live_output() const { return live_; }
  [[nodiscard]] SparkGraph* memory_graph() const { return memory_graph_; }
  [[nodiscard]] SparkGraph* cpu_graph() const { return cpu_graph_; }
  [[nodiscard]] QProgressBar* progress_bar() const { return progress_; }
  // The finished run's outcome badge (hidden while running and before the first run).
  [[nodiscard]] QLabel* outcome_label() const { return outcome_; }
  // The line under Run: the run's state, or what was just done (a session closed).
  [[nodiscard]] QLabel* state_label() const { return state_; }
  // Sessions: the toggle, what the session is, its workspace, Reset and Close.
  [[nodiscard]] QCheckBox* keep_session_box() const { return keep_session_; }
  [[nodiscard]] QLabel* session_label() const { return session_; }
  // The open session's memory, CPU, workspace, interpreter, age and idle time.
  [[nodiscard]] QLabel* session_stats_label() const { return session_stats_; }
  // Refreshes the stats while a session is open (never during a call).
  [[nodiscard]] QTimer* session_refresh_timer() const { return session_refresh_; }
  [[nodiscard]] QListWidget* session_files() const { return session_files_; }
  [[nodiscard]] QPushButton* reset_session_button() const { return reset_session_; }
  [[nodiscard]] QPushButton* close_session_button() const { return close_session_; }
  [[nodiscard]] bool running() const;
  // Input files: a local file placed in the run's working directory under `name`.
  void add_input_file(const QString& local_path, const QString& name);
  void set_collect_globs(const QString& globs);
  // The network allow-list entries (--allow-net), separated by spaces or commas; empty: no
  // network. Never remembered across sessions: a new session starts without network.
  void set_allow_net(const QString& entries);

 public slots:
  void run();
  void cancel();

 signals:
  void settings_changed();  // language or backend chosen: Plan follows
  void run_finished(const cordon::RunResult& result);
  void history_error(const QString& message);

 private:
  void set_running(bool running);
  void show_output(int stream, const QByteArray& chunk);
  void show_outcome(const RunResult& result);
  void show_session();  // the session's label, files and buttons, as the controller has it
  void show_session_stats();
  // A session belongs to the backend and environment that opened it: once another one is
  // chosen it is closed, with a word, so that no call reaches it from the new choice.
  void close_session_if_moved();

  BackendListPtr backends_;
  RunController* controller_;
  CodeEditor* editor_;
  QComboBox* language_;
  QComboBox* backend_;
  QComboBox* environment_;
  EnvironmentLists environments_;
  QDoubleSpinBox* timeout_;
  QSpinBox* memory_;
  QSpinBox* processes_;
  QSpinBox* output_cap_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* state_;
  QLabel* outcome_;
  QPlainTextEdit* live_;
  SparkGraph* memory_graph_;
  SparkGraph* cpu_graph_;
  QListWidget* inputs_;
  QLineEdit* collect_;
  QLineEdit* allow_net_;
  QSplitter* split_;
  QCheckBox* keep_session_;
  QLabel* session_;
  QLabel* session_stats_;
  QTimer* session_refresh_;
  QListWidget* session_files_;
  QPushButton* reset_session_;
  QPushButton* close_session_;
  qint64 last_cpu_ms_ = -1;  // for the CPU graph's rate (CPU ms per wall ms)
  qint64 last_cpu_usec_ = -1;
  OutputCap live_cap_;  // the run's output cap, as the Result applies it
};

}  // namespace cordon::inspector
