#include "tool_tab.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QVBoxLayout>

#include "frontend/prompt_render.h"
#include "line_diff.h"
#include "prompts/tool_description.h"
#include "prompts/tool_formats.h"

namespace cordon::inspector {
namespace {

constexpr std::string_view kToolId = "run_code";

QPlainTextEdit* monospace_view(QWidget* parent) {
  auto* view = new QPlainTextEdit(parent);
  view->setReadOnly(true);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  return view;
}

// One sentence a line: the text format is a single paragraph, and a changed claim is a
// changed sentence.
QStringList sentences(const QString& text) {
  QStringList out;
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    out << line.split(QRegularExpression(QStringLiteral("(?<=\\.) ")));
  }
  return out;
}

// The renderer's refusals are worded for the command line (they are the CLI's messages
// too); here they name the tab and the check box that do the same.
QString gui_words(QString message) {
  // Only the plain audit is the Audit tab's; one with an allow-list (flags after the name)
  // stays a command line.
  static const QRegularExpression kAudit(QStringLiteral("run `cordon audit --backend ([^`' ]+)`"));
  message.replace(kAudit, QStringLiteral("run the audit of \\1 in the Audit tab"));
  message.replace(QStringLiteral("pass --unverified"), QStringLiteral("tick Unverified"));
  return message;
}

}  // namespace

ToolTab::ToolTab(BackendListPtr backends, QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      title_(new QLabel(this)),
      proof_(new QLabel(this)),
      version_(new QComboBox(this)),
      format_(new QComboBox(this)),
      unverified_(
          new QCheckBox(tr("Unverified (render unproven claims, marked [unverified])"), this)),
      text_(monospace_view(this)),
      diff_from_(new QComboBox(this)),
      diff_to_(new QComboBox(this)),
      diff_(monospace_view(this)),
      export_(new QPushButton(tr("E&xport…"), this)),
      copy_(new QPushButton(tr("Cop&y"), this)) {
  if (Result<std::vector<prompts::ToolTemplate>> all = prompts::builtin_templates()) {
    for (const prompts::ToolTemplate& tool : *all) {
      if (tool.id != kToolId) continue;
      const QString label = QStringLiteral("v%1").arg(tool.version);
      for (QComboBox* box : {version_, diff_from_, diff_to_}) {
        box->addItem(label, tool.version);
        box->setItemData(box->count() - 1, QString::fromStdString(tool.changelog), Qt::ToolTipRole);
      }
    }
  }
  // Latest by default; the diff starts from the one before it.
  version_->setCurrentIndex(version_->count() - 1);
  diff_to_->setCurrentIndex(diff_to_->count() - 1);
  diff_from_->setCurrentIndex(std::max(0, int(diff_from_->count()) - 2));
  for (const std::string_view format : prompts::kToolFormats) {
    format_->addItem(QString::fromLatin1(format.data(), qsizetype(format.size())));
  }
  proof_->setWordWrap(true);
  proof_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  diff_->setLineWrapMode(QPlainTextEdit::NoWrap);

  auto* pickers = new QHBoxLayout;
  pickers->addWidget(new QLabel(tr("&Version"), this));
  pickers->addWidget(version_);
  pickers->addWidget(new QLabel(tr("Fo&rmat"), this));  // Alt+F is the File menu
  pickers->addWidget(format_);
  pickers->addWidget(unverified_);
  pickers->addStretch(1);
  pickers->addWidget(copy_);
  pickers->addWidget(export_);
  qobject_cast<QLabel*>(pickers->itemAt(0)->widget())->setBuddy(version_);
  qobject_cast<QLabel*>(pickers->itemAt(2)->widget())->setBuddy(format_);

  auto* diff_row = new QHBoxLayout;
  diff_row->addWidget(new QLabel(tr("Diff of the text from"), this));
  diff_row->addWidget(diff_from_);
  diff_row->addWidget(new QLabel(tr("to"), this));
  diff_row->addWidget(diff_to_);
  diff_row->addStretch(1);
  auto* diff_box = new QWidget(this);
  auto* diff_layout = new QVBoxLayout(diff_box);
  diff_layout->setContentsMargins(0, 0, 0, 0);
  diff_layout->addLayout(diff_row);
  diff_layout->addWidget(diff_, 1);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(text_);
  split->addWidget(diff_box);
  diff_box->setVisible(version_->count() > 1);  // one version has nothing to diff against
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addWidget(proof_);
  layout->addLayout(pickers);
  layout->addWidget(split, 1);

  for (QComboBox* box : {version_, format_, diff_from_, diff_to_}) {
    connect(box, &QComboBox::currentIndexChanged, this, &ToolTab::refresh);
  }
  connect(unverified_, &QCheckBox::toggled, this, &ToolTab::refresh);
  connect(copy_, &QPushButton::clicked, this, &ToolTab::copy_to_clipboard);
  connect(export_, &QPushButton::clicked, this, &ToolTab::export_dialog);
}

void ToolTab::show_tool(const QString& backend_name, const RunRequest& request) {
  backend_name_ = backend_name;
  request_ = request;
  const Backend* backend = backends_->backend(backend_name);
  report_ = backend != nullptr ? frontend::stored_report(*backend, request.network) : std::nullopt;
  refresh();
}

QString ToolTab::render(int version, const QString& format, QString* error) const {
  const Backend* backend = backends_->backend(backend_name_);
  if (backend == nullptr) {
    *error = tr("Backend %1 is not available here").arg(backend_name_);
    return {};
  }
  Result<prompts::ToolTemplate> tool = prompts::find_template(kToolId, version);
  if (!tool) {
    *error = QString::fromStdString(tool.error().describe());
    return {};
  }
  const frontend::PromptRender input{.tool = &*tool,
                                     .backend = backend,
                                     .backend_name = backend_name_.toStdString(),
                                     .limits = request_.limits,
                                     .timeout = effective_timeout(request_),
                                     .report = report_ ? &*report_ : nullptr,
                                     .unverified = unverified_->isChecked(),
                                     .network = request_.network,
                                     .software = backends_->software()};
  Result<std::string> text = frontend::render_prompt(input, format.toStdString());
  if (!text) {
    *error = gui_words(QString::fromStdString(text.error().message));
    return {};
  }
  error->clear();
  return QString::fromStdString(*text);
}

void ToolTab::refresh() {
  title_->setText(tr("The run_code tool for %1 with the Run tab's timeout, limits and network "
                     "— what `cordon prompt` prints")
                      .arg(backend_name_));
  if (report_) {
    proof_->setText(tr("Proven by the audit report of %1 (%2; backend %3 %4; policy %5)%6")
                        .arg(QString::fromStdString(report_->created_at),
                             QString::fromStdString(report_->host_summary), backend_name_,
                             QString::fromStdString(report_->binding.backend_version),
                             QString::fromStdString(report_->binding.policy_hash).left(19),
                             report_->complete ? QString() : tr(", incomplete")));
  } else {
    proof_->setText(
        request_.network.any()
            ? tr("No stored audit report for %1 on this host and policy with the Run tab's "
                 "network allow-list: every claim is unproven (run `cordon audit` with the same "
                 "--allow-net).")
                  .arg(backend_name_)
            : tr("No stored audit report for %1 on this host and policy: every claim is "
                 "unproven (run the audit in the Audit tab).")
                  .arg(backend_name_));
  }
  QString error;
  const QString shown = render(version_->currentData().toInt(), format_->currentText(), &error);
  text_->setPlainText(error.isEmpty() ? shown : tr("Not rendered: %1").arg(error));
  export_->setEnabled(error.isEmpty());
  copy_->setEnabled(error.isEmpty());

  QString from_error;
  QString to_error;
  const QString from =
      render(diff_from_->currentData().toInt(), QStringLiteral("text"), &from_error);
  const QString to = render(diff_to_->currentData().toInt(), QStringLiteral("text"), &to_error);
  if (!from_error.isEmpty() || !to_error.isEmpty()) {
    diff_->setPlainText(tr("No diff: %1").arg(from_error.isEmpty() ? to_error : from_error));
  } else {
    const std::vector<DiffLine> diff = diff_lines(sentences(from), sentences(to));
    const bool same = std::ranges::all_of(
        diff, [](const DiffLine& line) { return line.kind == DiffLine::kSame; });
    diff_->setPlainText((same ? tr("(the two versions render the same text)\n") : QString()) +
                        inspector::diff_text(diff));
  }
}

QString ToolTab::text() const { return text_->toPlainText(); }
QString ToolTab::proof_text() const { return proof_->text(); }
QString ToolTab::diff_text() const { return diff_->toPlainText(); }

bool ToolTab::export_to(const QString& path) const {
  QString error;
  const QString shown = render(version_->currentData().toInt(), format_->currentText(), &error);
  if (!error.isEmpty()) return false;
  QFile file(path);
  const QByteArray bytes = shown.toUtf8();
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

void ToolTab::copy_to_clipboard() const { QGuiApplication::clipboard()->setText(text()); }

void ToolTab::export_dialog() {
  const bool text_format = format_->currentText() == QStringLiteral("text");
  const QString name = QFileDialog::getSaveFileName(
      this, tr("Export the tool description"),
      QStringLiteral("run_code-%1.%2").arg(format_->currentText(), text_format ? "txt" : "json"));
  if (name.isEmpty()) return;
  if (!export_to(name)) proof_->setText(tr("Cannot write %1").arg(name));
}

}  // namespace cordon::inspector
