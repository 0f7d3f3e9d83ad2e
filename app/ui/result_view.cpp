#include "result_view.h"

#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>

#include "cordon/result_json.h"
#include "outcome_badge.h"

namespace cordon::inspector {
namespace {

using nlohmann::json;

QPlainTextEdit* monospace_view(QWidget* parent) {
  auto* view = new QPlainTextEdit(parent);
  view->setReadOnly(true);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  view->setLineWrapMode(QPlainTextEdit::NoWrap);
  return view;
}

QString text_of(const json& value) {
  if (value.is_null()) return QStringLiteral("—");
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

// "12 ms", or "not measured" for a figure the run did not measure (result_figure()).
QString figure_text(const json& result, std::string_view field, const QString& unit) {
  const std::optional<std::int64_t> value = result_figure(result, field);
  return value ? QStringLiteral("%1 %2").arg(*value).arg(unit) : QObject::tr("not measured");
}

QString bytes_text(const std::string& bytes) {
  return QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
}

// "stdout", "stdout (truncated, lossy)": the page title says what happened to the bytes.
QString stream_title(const char* name, const json& result) {
  QStringList marks;
  if (result.value(std::string(name) + "_truncated", false)) marks << QObject::tr("truncated");
  if (result.value(std::string(name) + "_lossy", false))
    marks << QObject::tr("not UTF-8, shown with �");
  const QString title = QString::fromLatin1(name);
  return marks.isEmpty() ? title : QStringLiteral("%1 (%2)").arg(title, marks.join(", "));
}

}  // namespace

ResultView::ResultView(QWidget* parent)
    : QWidget(parent),
      badge_(new QLabel(this)),
      summary_(new QLabel(this)),
      error_(new QLabel(this)),
      enforced_(new QTreeWidget(this)),
      pages_(new QTabWidget(this)),
      stdout_(monospace_view(this)),
      stderr_(monospace_view(this)),
      json_(monospace_view(this)),
      artifacts_(new QTreeWidget(this)),
      copy_json_(new QPushButton(tr("Copy JSON"), this)),
      save_artifact_(new QPushButton(tr("Save artifact…"), this)),
      open_artifact_(new QPushButton(tr("&Open artifact"), this)) {
  badge_->setObjectName(QStringLiteral("badge"));
  badge_->setAlignment(Qt::AlignCenter);
  badge_->setMinimumWidth(160);
  QFont bold = badge_->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.3);
  badge_->setFont(bold);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);
  error_->setWordWrap(true);
  error_->setStyleSheet(QStringLiteral("color: #c62828"));
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  enforced_->setHeaderLabels({tr("Aspect"), tr("Enforced by"), tr("Value")});
  enforced_->setRootIsDecorated(false);
  enforced_->setMaximumHeight(140);
  artifacts_->setHeaderLabels({tr("Path"), tr("Size"), tr("SHA-256")});
  artifacts_->setRootIsDecorated(false);
  copy_json_->setObjectName(QStringLiteral("copyJson"));
  connect(copy_json_, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(json_->toPlainText()); });

  save_artifact_->setEnabled(false);
  open_artifact_->setEnabled(false);
  connect(artifacts_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    save_artifact_->setEnabled(item != nullptr);
    open_artifact_->setEnabled(item != nullptr);
  });
  connect(open_artifact_, &QPushButton::clicked, this, [this] {
    if (QTreeWidgetItem* item = artifacts_->currentItem()) {
      open_artifact(artifacts_->indexOfTopLevelItem(item));
    }
  });
  connect(save_artifact_, &QPushButton::clicked, this, [this] {
    QTreeWidgetItem* item = artifacts_->currentItem();
    if (item == nullptr) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save artifact"), item->text(0));
    if (!path.isEmpty()) save_artifact(artifacts_->indexOfTopLevelItem(item), path);
  });
  auto* artifact_page = new QWidget(this);
  auto* artifact_layout = new QVBoxLayout(artifact_page);
  artifact_layout->addWidget(artifacts_, 1);
  auto* artifact_buttons = new QHBoxLayout;
  artifact_buttons->addStretch(1);
  artifact_buttons->addWidget(open_artifact_);
  artifact_buttons->addWidget(save_artifact_);
  artifact_layout->addLayout(artifact_buttons);
  pages_->addTab(stdout_, QStringLiteral("stdout"));
  pages_->addTab(stderr_, QStringLiteral("stderr"));
  pages_->addTab(artifact_page, tr("Artifacts"));
  pages_->addTab(json_, QStringLiteral("JSON"));

  auto* top = new QHBoxLayout;
  top->addWidget(badge_);
  top->addWidget(summary_, 1);
  top->addWidget(copy_json_, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(error_);
  layout->addWidget(enforced_);
  layout->addWidget(pages_, 1);
  clear();
}

void ResultView::clear() {
  badge_->setText(tr("no run yet"));
  badge_->setStyleSheet(QStringLiteral("padding: 8px; border-radius: 4px; border: 1px solid gray"));
  summary_->clear();
  error_->hide();
  enforced_->clear();
  stdout_->clear();
  stderr_->clear();
  json_->clear();
  artifacts_->clear();
  artifacts_json_ = nlohmann::json::array();
  copy_json_->setEnabled(false);
}

int ResultView::artifact_count() const { return static_cast<int>(artifacts_json_.size()); }

bool ResultView::save_artifact(int index, const QString& path) const {
  if (index < 0 || index >= artifact_count()) return false;
  const json& artifact = artifacts_json_.at(static_cast<std::size_t>(index));
  const QByteArray bytes = QByteArray::fromBase64(
      QByteArray::fromStdString(artifact.value("content_base64", std::string())));
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QString ResultView::open_artifact(int index) {
  if (index < 0 || index >= artifact_count()) return {};
  if (!opened_) opened_ = std::make_unique<QTemporaryDir>();
  if (!opened_->isValid()) return {};
  // Only the file name: an artifact path never places a file outside the directory. One
  // subdirectory per opening, as two artifacts may share a name.
  QString name =
      QFileInfo(text_of(artifacts_json_.at(static_cast<std::size_t>(index)).value("path", json())))
          .fileName();
  if (name.isEmpty() || name == QStringLiteral("..")) name = QStringLiteral("artifact");
  const QString sub = QString::number(++opened_count_);
  if (!QDir(opened_->path()).mkdir(sub)) return {};
  const QString path = opened_->filePath(sub + QLatin1Char('/') + name);
  if (!save_artifact(index, path)) return {};
  QDesktopServices::openUrl(QUrl::fromLocalFile(path));
  return path;
}

void ResultView::show_result(const RunResult& result) {
  show_result(to_json(result), result.stdout_data, result.stderr_data);
}

void ResultView::show_result(const json& result, const std::string& stdout_data,
                             const std::string& stderr_data) {
  clear();
  const Badge badge = outcome_badge(result);
  badge_->setText(badge.text);
  badge_->setStyleSheet(
      QStringLiteral("padding: 8px; border-radius: 4px; color: white; background: %1")
          .arg(badge.color.name()));

  const json backend = result.value("backend", json::object());
  const json policy = result.value("policy", json());
  QStringList lines;
  lines << tr("backend %1 %2")
               .arg(text_of(backend.value("name", json())),
                    text_of(backend.value("version", json())));
  if (policy.is_object()) {
    lines << tr("policy %1 (%2)")
                 .arg(text_of(policy.value("name", json())),
                      text_of(policy.value("hash", json())).left(16));
  }
  const QString ms = QStringLiteral("ms");
  const QString kib = QStringLiteral("KiB");
  lines << tr("wall %1 · set-up %2 · CPU %3")
               .arg(figure_text(result, "wall_ms", ms), figure_text(result, "setup_ms", ms),
                    figure_text(result, "cpu_ms", ms));
  lines << tr("whole-sandbox memory peak %1 · largest process %2")
               .arg(figure_text(result, "memory_peak_kb", kib),
                    figure_text(result, "max_rss_kb", kib));
  lines << tr("exit code %1 · signal %2")
               .arg(text_of(result.value("exit_code", json())),
                    text_of(result.value("signal", json())));
  summary_->setText(lines.join(QLatin1Char('\n')));

  if (const json error = result.value("error", json()); error.is_string()) {
    error_->setText(text_of(error));
    error_->show();
  }
  for (const json& item : result.value("enforced", json::array())) {
    enforced_->addTopLevelItem(new QTreeWidgetItem({text_of(item.value("aspect", json())),
                                                    text_of(item.value("mechanism", json())),
                                                    text_of(item.value("value", json()))}));
  }
  artifacts_json_ = result.value("artifacts", json::array());
  for (const json& artifact : artifacts_json_) {
    artifacts_->addTopLevelItem(new QTreeWidgetItem({text_of(artifact.value("path", json())),
                                                     text_of(artifact.value("size", json())),
                                                     text_of(artifact.value("sha256", json()))}));
  }
  enforced_->header()->resizeSections(QHeaderView::ResizeToContents);

  stdout_->setPlainText(bytes_text(stdout_data));
  stderr_->setPlainText(bytes_text(stderr_data));
  pages_->setTabText(0, stream_title("stdout", result));
  pages_->setTabText(1, stream_title("stderr", result));
  pages_->setTabText(2, tr("Artifacts (%1)").arg(artifacts_->topLevelItemCount()));
  json_->setPlainText(QString::fromStdString(
      result.dump(/*indent=*/2, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace)));
  copy_json_->setEnabled(true);
}

QString ResultView::summary_text() const { return summary_->text(); }

QString ResultView::badge_text() const { return badge_->text(); }
QString ResultView::stdout_text() const { return stdout_->toPlainText(); }
QString ResultView::stderr_text() const { return stderr_->toPlainText(); }
QString ResultView::json_text() const { return json_->toPlainText(); }

}  // namespace cordon::inspector
