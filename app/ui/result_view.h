// The Result of one run: outcome badge, timings and memory, backend and policy, what was
// enforced, stdout/stderr (truncation and lossy decoding marked), artifacts, and the whole
// Result as JSON to copy. Fed from a Result's JSON plus the raw output bytes, so a live
// run and a run from the history are shown by the same code.
#pragma once

#include <QTemporaryDir>
#include <QWidget>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cordon/result.h"

class QLabel;
class QPlainTextEdit;
class QTreeWidget;
class QTabWidget;
class QPushButton;

namespace cordon::inspector {

class ResultView : public QWidget {
  Q_OBJECT

 public:
  explicit ResultView(QWidget* parent = nullptr);

  void show_result(const RunResult& result);
  void show_result(const nlohmann::json& result, const std::string& stdout_data,
                   const std::string& stderr_data);
  void clear();

  [[nodiscard]] QString badge_text() const;
  // Timings, memory, exit code and signal, one line each.
  [[nodiscard]] QString summary_text() const;
  [[nodiscard]] QString stdout_text() const;
  [[nodiscard]] QString stderr_text() const;
  [[nodiscard]] QString json_text() const;
  // The banner saying the output was cut at the cap; empty when it was not.
  [[nodiscard]] QString truncation_banner() const;
  // The warning shown for a run that enforced no isolation; empty otherwise.
  [[nodiscard]] QString unisolated_banner() const;
  [[nodiscard]] QTreeWidget* enforced_table() const { return enforced_; }
  // The connections of a run with a network allow-list (issue #16), one row each; its page
  // shows only for such a run.
  [[nodiscard]] QTreeWidget* network_table() const { return network_; }
  [[nodiscard]] bool network_page_shown() const;
  // The title of the output page shown ("stderr · 2 lines"), and of page `index`.
  [[nodiscard]] QString current_page_title() const;
  [[nodiscard]] QString page_title(int index) const;
  [[nodiscard]] int artifact_count() const;
  // Writes the artifact at `index` (in the list's order) to `path`: its raw bytes.
  bool save_artifact(int index, const QString& path) const;
  // Writes the artifact to a private temporary directory (kept while the view lives) under
  // its file name and opens it with the desktop's handler (QDesktopServices). Returns the
  // file written, empty when it could not be.
  QString open_artifact(int index);

 private:
  static constexpr int kNetworkPage = 4;  // after stdout, stderr, Artifacts, JSON
  void fit_enforced();                    // the Enforced table as tall as its rows
  void show_network(const nlohmann::json& network);

  QLabel* badge_;
  QLabel* summary_;
  QLabel* error_;
  QLabel* truncated_;
  QLabel* unisolated_;
  QTreeWidget* enforced_;
  QTabWidget* pages_;
  QPlainTextEdit* stdout_;
  QPlainTextEdit* stderr_;
  QPlainTextEdit* json_;
  QTreeWidget* artifacts_;
  QTreeWidget* network_;
  QPushButton* copy_json_;
  QPushButton* save_artifact_;
  QPushButton* open_artifact_;
  std::unique_ptr<QTemporaryDir> opened_;  // the artifacts handed to other applications
  int opened_count_ = 0;
  nlohmann::json artifacts_json_;  // of the result shown: the bytes to save, base64
};

}  // namespace cordon::inspector
