#include "plan_tab.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "frontend/plan_text.h"

namespace cordon::inspector {

PlanTab::PlanTab(BackendListPtr backends, QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      title_(new QLabel(this)),
      text_(new QPlainTextEdit(this)) {
  text_->setReadOnly(true);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addWidget(text_, 1);
}

void PlanTab::show_plan(const QString& backend_name, const RunRequest& request) {
  const Backend* backend = backends_->backend(backend_name);
  if (backend == nullptr) {
    title_->setText(tr("Backend %1 is not available here").arg(backend_name));
    text_->clear();
    return;
  }
  title_->setText(
      tr("Plan of a run on %1 with the Run tab's limits (nothing is run)").arg(backend_name));
  Result<Plan> plan = backend->describe_plan(request);
  if (!plan) {
    text_->setPlainText(tr("No plan: %1").arg(QString::fromStdString(plan.error().describe())));
    return;
  }
  const Plan full =
      frontend::complete_plan(std::move(*plan), request, backend->capabilities(request.limits));
  text_->setPlainText(QString::fromStdString(frontend::render_plan_text(full)));
}

QString PlanTab::plan_text() const { return text_->toPlainText(); }

}  // namespace cordon::inspector
