// Plan: what the sandbox would be for the Run tab's backend and limits — namespaces,
// mounts, seccomp policy, limits and how each is enforced here — without running anything
// (Backend::describe_plan, completed and rendered exactly as `cordon plan` prints it).
#pragma once

#include <QWidget>

#include "backend_list.h"
#include "cordon/request.h"

class QPlainTextEdit;
class QLabel;

namespace cordon::inspector {

class PlanTab : public QWidget {
  Q_OBJECT

 public:
  PlanTab(BackendListPtr backends, QWidget* parent = nullptr);
  void show_plan(const QString& backend, const RunRequest& request);
  // The backends as the Run tab's environment has them (BackendList::in_environment()).
  void set_backends(BackendListPtr backends) { backends_ = std::move(backends); }
  [[nodiscard]] QString plan_text() const;

 private:
  BackendListPtr backends_;
  QLabel* title_;
  QPlainTextEdit* text_;
};

}  // namespace cordon::inspector
