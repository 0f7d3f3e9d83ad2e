// Tool description: the run_code tool the model will get for the Run tab's backend,
// timeout and limits, rendered by the same code as `cordon prompt` (frontend::render_prompt):
// a claim is stated only as far as the stored audit report proves it, or marked
// "[unverified]" when the user asks for unproven claims. A version picker, a diff between
// two versions, and export to a file or the clipboard in each format (kToolFormats).
// Never audits: the Audit tab does, off the GUI thread.
#pragma once

#include <QWidget>
#include <optional>

#include "audit/report.h"
#include "backend_list.h"
#include "cordon/request.h"

class QComboBox;
class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace cordon::inspector {

class ToolTab : public QWidget {
  Q_OBJECT

 public:
  ToolTab(BackendListPtr backends, QWidget* parent = nullptr);

  // Follows the Run tab: re-renders for this backend and request (timeout, limits), and
  // reloads the stored report (an audit may have stored one meanwhile).
  void show_tool(const QString& backend, const RunRequest& request);
  // The backends as the Run tab's environment has them; the description states it.
  void set_backends(BackendListPtr backends) { backends_ = std::move(backends); }

  // The description at `version` in `format`, or why it cannot be rendered (error set).
  [[nodiscard]] QString render(int version, const QString& format, QString* error) const;
  [[nodiscard]] QString text() const;        // shown: the picked version and format
  [[nodiscard]] QString proof_text() const;  // which report proves it, or that none does
  [[nodiscard]] QString diff_text() const;
  [[nodiscard]] bool export_to(const QString& path) const;
  void copy_to_clipboard() const;

  [[nodiscard]] QComboBox* version_box() const { return version_; }
  [[nodiscard]] QComboBox* format_box() const { return format_; }
  [[nodiscard]] QComboBox* diff_from_box() const { return diff_from_; }
  [[nodiscard]] QComboBox* diff_to_box() const { return diff_to_; }
  [[nodiscard]] QCheckBox* unverified_box() const { return unverified_; }

 private:
  void refresh();
  void export_dialog();

  BackendListPtr backends_;
  QString backend_name_;
  RunRequest request_;
  std::optional<audit::AuditReport> report_;
  QLabel* title_;
  QLabel* proof_;
  QComboBox* version_;
  QComboBox* format_;
  QCheckBox* unverified_;
  QPlainTextEdit* text_;
  QComboBox* diff_from_;
  QComboBox* diff_to_;
  QPlainTextEdit* diff_;
  QPushButton* export_;
  QPushButton* copy_;
};

}  // namespace cordon::inspector
