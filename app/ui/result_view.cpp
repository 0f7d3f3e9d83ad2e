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
#include <QScrollBar>
#include <QTabWidget>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>

#include "cordon/capabilities.h"
#include "cordon/result_json.h"
#include "cordon/session.h"
#include "cordon/units.h"
#include "display_text.h"
#include "frontend/exit_status.h"
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

// "12.3 MiB", or "not measured".
QString size_text(const json& result, std::string_view field) {
  const std::optional<std::int64_t> kib = result_figure(result, field);
  if (!kib) return QObject::tr("not measured");
  return QString::fromStdString(format_size(static_cast<std::uint64_t>(*kib) * 1024));
}

// The memory limit as the run's enforced list states it ("256 MiB"), empty when none.
QString memory_limit(const json& result) {
  for (const json& item : result.value("enforced", json::array())) {
    if (item.value("aspect", json()) == "memory" && item.value("value", json()).is_string()) {
      return text_of(item["value"]);
    }
  }
  return {};
}

// True when the run enforced none of the isolation aspects: the code ran as the user,
// with the user's files and network.
bool unisolated(const json& result) {
  for (const json& item : result.value("enforced", json::array())) {
    const json aspect = item.value("aspect", json());
    for (const Aspect isolation : kIsolationAspects) {
      if (aspect == to_string(isolation)) return false;
    }
  }
  return true;
}

// How the main process ended, in words: a run cordon stopped says so (its SIGKILL is
// cordon's), a run that exited has no signal, one that never exited has no exit code.
QString ending_text(const json& result) {
  const int exit_code = result.value("exit_code", -1);
  const int signal = result.value("signal", 0);
  const std::string outcome = result.value("outcome", "");
  const QString exit =
      exit_code >= 0 ? QObject::tr("exit code %1").arg(exit_code) : QObject::tr("did not exit");
  QString how;
  const bool stopped = outcome == "timed_out" || outcome == "cancelled";
  if (signal == 0) {
    // Result schema 1 wrote 0 for the SIGKILL of a stopped run as well.
    how = stopped ? QObject::tr("signal not recorded") : QObject::tr("no signal");
  } else {
    how = QString::fromStdString(frontend::signal_name(signal));
    if (outcome == "timed_out") how = QObject::tr("%1, sent by cordon at the deadline").arg(how);
    if (outcome == "cancelled") how = QObject::tr("%1, sent by cordon on cancel").arg(how);
  }
  return QStringLiteral("%1 · %2").arg(exit, how);
}

// "stdout · 12 lines", "stdout · 3 lines (truncated, lossy)": the page title says how much
// there is and what happened to the bytes.
QString stream_title(const char* name, const json& result, const QString& text) {
  QStringList marks;
  if (result.value(std::string(name) + "_truncated", false)) marks << QObject::tr("truncated");
  if (result.value(std::string(name) + "_lossy", false))
    marks << QObject::tr("not UTF-8, shown with �");
  const qsizetype lines = line_count(text);
  const QString title =
      lines == 1 ? QObject::tr("%1 · 1 line").arg(QString::fromLatin1(name))
                 : QObject::tr("%1 · %2 lines").arg(QString::fromLatin1(name)).arg(lines);
  return marks.isEmpty() ? title : QStringLiteral("%1 (%2)").arg(title, marks.join(", "));
}

// The text of a stream, with a marker where the cap cut it (a cut stream kept exactly the
// cap's bytes).
QString stream_text(const std::string& bytes, bool truncated) {
  QString text = display_text(QByteArray::fromStdString(bytes));
  if (truncated) {
    if (!text.isEmpty() && !text.endsWith(QLatin1Char('\n'))) text += QLatin1Char('\n');
    text += QObject::tr("[cut here: the output cap (%1) was reached; the rest was not kept]")
                .arg(QString::fromStdString(format_size(bytes.size())));
  }
  return text;
}

}  // namespace

ResultView::ResultView(QWidget* parent)
    : QWidget(parent),
      badge_(new QLabel(this)),
      summary_(new QLabel(this)),
      error_(new QLabel(this)),
      truncated_(new QLabel(this)),
      unisolated_(new QLabel(this)),
      enforced_(new QTreeWidget(this)),
      pages_(new QTabWidget(this)),
      stdout_(monospace_view(this)),
      stderr_(monospace_view(this)),
      json_(monospace_view(this)),
      artifacts_(new QTreeWidget(this)),
      network_(new QTreeWidget(this)),
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
  unisolated_->setObjectName(QStringLiteral("unisolatedBanner"));
  unisolated_->setWordWrap(true);
  unisolated_->setStyleSheet(
      QStringLiteral("background: #ffebee; color: #b71c1c; padding: 4px; border-radius: 4px"));
  truncated_->setObjectName(QStringLiteral("truncatedBanner"));
  truncated_->setWordWrap(true);
  truncated_->setStyleSheet(
      QStringLiteral("background: #fff3e0; color: #e65100; padding: 4px; border-radius: 4px"));
  enforced_->setHeaderLabels({tr("Aspect"), tr("Enforced by"), tr("Value")});
  enforced_->setRootIsDecorated(false);
  // Every row shows: the height follows the rows (fit_enforced()), never a scroll bar.
  enforced_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  enforced_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
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
  network_->setHeaderLabels(
      {tr("Allowed"), tr("Request"), tr("Address"), tr("Out"), tr("In"), tr("Why")});
  network_->setRootIsDecorated(false);
  pages_->addTab(network_, tr("Network"));

  auto* top = new QHBoxLayout;
  top->addWidget(badge_);
  top->addWidget(summary_, 1);
  top->addWidget(copy_json_, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(error_);
  layout->addWidget(unisolated_);
  layout->addWidget(truncated_);
  layout->addWidget(enforced_);
  layout->addWidget(pages_, 1);
  clear();
}

void ResultView::clear() {
  badge_->setText(tr("no run yet"));
  badge_->setStyleSheet(QStringLiteral("padding: 8px; border-radius: 4px; border: 1px solid gray"));
  summary_->clear();
  error_->hide();
  truncated_->hide();
  unisolated_->hide();
  enforced_->clear();
  stdout_->clear();
  stderr_->clear();
  json_->clear();
  artifacts_->clear();
  artifacts_json_ = nlohmann::json::array();
  network_->clear();
  pages_->setTabVisible(kNetworkPage, false);
  copy_json_->setEnabled(false);
}

bool ResultView::network_page_shown() const { return pages_->isTabVisible(kNetworkPage); }

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
  // The environment the code ran in (issue #17): the host's /usr, or a pinned tree.
  if (const json env = result.value("environment", json()); env.is_object()) {
    const QString name = text_of(env.value("name", json()));
    const QString digest = text_of(env.value("digest", json()));
    lines << (digest.isEmpty()
                  ? tr("environment %1 (the host's /usr)").arg(name)
                  : tr("environment %1 (%2)")
                        .arg(name.isEmpty() ? tr("unregistered") : name, digest.left(19)));
  }
  // A call in a session (issue #41): which, the cell's value, and whether the interpreter
  // (its variables) was lost with this call.
  if (const json session = result.value("session", json()); session.is_object()) {
    lines << tr("session %1… · call %2")
                 .arg(text_of(session.value("id", json())).left(8),
                      text_of(session.value("call", json())));
  }
  if (const json value = result.value("value", json()); value.is_string()) {
    lines << tr("value %1").arg(text_of(value).left(200));
  }
  if (result.value("state_lost", false)) {
    lines << QString::fromUtf8(kStateLostWords.data(),
                               static_cast<qsizetype>(kStateLostWords.size()));
  }
  const QString ms = QStringLiteral("ms");
  lines << tr("wall %1 · set-up %2 · CPU %3")
               .arg(figure_text(result, "wall_ms", ms), figure_text(result, "setup_ms", ms),
                    figure_text(result, "cpu_ms", ms));
  QString peak = size_text(result, "memory_peak_kb");
  const QString limit = memory_limit(result);
  if (!limit.isEmpty() && result_figure(result, "memory_peak_kb")) {
    peak = tr("%1 of the %2 limit").arg(peak, limit);
  }
  lines << tr("whole-sandbox memory peak %1 · largest process %2")
               .arg(peak, size_text(result, "max_rss_kb"));
  lines << ending_text(result);
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
  fit_enforced();
  if (unisolated(result) && !result.value("enforced", json::array()).empty()) {
    unisolated_->setText(
        tr("No isolation: %1 enforced none of the network, filesystem, environment or process-tree "
           "isolation. The code ran as you, with your files and your network.")
            .arg(text_of(backend.value("name", json()))));
    unisolated_->show();
  }

  const bool out_cut = result.value("stdout_truncated", false);
  const bool err_cut = result.value("stderr_truncated", false);
  stdout_->setPlainText(stream_text(stdout_data, out_cut));
  stderr_->setPlainText(stream_text(stderr_data, err_cut));
  pages_->setTabText(
      0, stream_title("stdout", result, display_text(QByteArray::fromStdString(stdout_data))));
  pages_->setTabText(
      1, stream_title("stderr", result, display_text(QByteArray::fromStdString(stderr_data))));
  if (out_cut || err_cut) {
    truncated_->setText(tr("Output cut at the cap: %1 kept only its first bytes; the code wrote "
                           "more. Raise the output cap on the Run tab to keep more.")
                            .arg(out_cut && err_cut ? tr("stdout and stderr")
                                 : out_cut          ? QStringLiteral("stdout")
                                                    : QStringLiteral("stderr")));
    truncated_->show();
  }
  // A failure is usually explained on stderr: open there when there is something to read.
  const bool failed = result.value("outcome", "") != "ok";
  pages_->setCurrentIndex(failed && !stderr_data.empty() ? 1 : 0);
  pages_->setTabText(2, tr("Artifacts (%1)").arg(artifacts_->topLevelItemCount()));
  show_network(result.value("network", json()));
  json_->setPlainText(QString::fromStdString(
      result.dump(/*indent=*/2, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace)));
  copy_json_->setEnabled(true);
}

void ResultView::show_network(const json& network) {
  if (!network.is_object()) return;
  int denied = 0;
  const auto bytes = [](const json& n) {
    return QString::fromStdString(format_size(n.is_number_unsigned() ? n.get<std::uint64_t>() : 0));
  };
  for (const json& c : network.value("connections", json::array())) {
    const bool allowed = c.value("allowed", false);
    denied += allowed ? 0 : 1;
    const QString request =
        (text_of(c.value("method", json())) + QLatin1Char(' ') + text_of(c.value("host", json())) +
         QLatin1Char(':') + text_of(c.value("port", json())))
            .trimmed();
    auto* item = new QTreeWidgetItem(
        {allowed ? tr("allowed") : tr("denied"), request, text_of(c.value("address", json())),
         bytes(c.value("bytes_out", json())), bytes(c.value("bytes_in", json())),
         text_of(c.value("why", json()))});
    item->setForeground(0, allowed ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
    item->setToolTip(5, item->text(5));
    network_->addTopLevelItem(item);
  }
  network_->header()->resizeSections(QHeaderView::ResizeToContents);
  const int count = network_->topLevelItemCount();
  QString title = tr("Network (%1)").arg(count);
  if (denied != 0) title = tr("Network (%1, %2 denied)").arg(count).arg(denied);
  if (const json limit = network.value("limit_reached", json()); limit.is_string()) {
    title += tr(" · %1 limit reached").arg(text_of(limit));
  }
  pages_->setTabText(kNetworkPage, title);
  pages_->setTabVisible(kNetworkPage, true);
}

void ResultView::fit_enforced() {
  int height = 2 * enforced_->frameWidth() + enforced_->header()->sizeHint().height();
  for (int i = 0; i < enforced_->topLevelItemCount(); ++i) {
    height += enforced_->sizeHintForRow(i);
  }
  if (enforced_->horizontalScrollBar()->isVisible()) {
    height += enforced_->horizontalScrollBar()->sizeHint().height();
  }
  enforced_->setFixedHeight(height);
}

QString ResultView::summary_text() const { return summary_->text(); }
QString ResultView::unisolated_banner() const {
  return unisolated_->isVisibleTo(this) ? unisolated_->text() : QString();
}
QString ResultView::truncation_banner() const {
  return truncated_->isVisibleTo(this) ? truncated_->text() : QString();
}
QString ResultView::current_page_title() const { return pages_->tabText(pages_->currentIndex()); }
QString ResultView::page_title(int index) const { return pages_->tabText(index); }

QString ResultView::badge_text() const { return badge_->text(); }
QString ResultView::stdout_text() const { return stdout_->toPlainText(); }
QString ResultView::stderr_text() const { return stderr_->toPlainText(); }
QString ResultView::json_text() const { return json_->toPlainText(); }

}  // namespace cordon::inspector
