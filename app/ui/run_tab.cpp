#include "run_tab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTextCharFormat>
#include <QTextCursor>
#include <QTimer>
#include <QVBoxLayout>
#include <chrono>

#include "code_editor.h"
#include "cordon/units.h"
#include "display_text.h"
#include "outcome_badge.h"
#include "run_controller.h"
#include "spark_graph.h"

namespace cordon::inspector {
namespace {

constexpr std::uint64_t kMiB = 1u << 20;
constexpr std::uint64_t kKiB = 1u << 10;
// Item data of an input file restored from history: its recorded bytes.
constexpr int kKeptBytesRole = Qt::UserRole + 1;
// How often an open session's figures are read again: light (cgroup files and a walk of the
// workspace), and never while a call runs.
constexpr int kSessionRefreshMs = 2000;

// The interpreter table's languages, sh first (a new session's default).
const Language kLanguages[] = {Language::kSh, Language::kBash, Language::kPython,
                               Language::kJavaScript, Language::kPerl};

QString name_of(Language language) {
  const std::string_view name = to_string(language);
  return QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
}

QString size_of(std::optional<std::int64_t> bytes) {
  return bytes ? QString::fromStdString(format_size(static_cast<std::uint64_t>(*bytes)))
               : QObject::tr("not measured");
}

// Age and idle time in whole seconds: the panel is read again every 2 s.
QString seconds_of(std::chrono::milliseconds d) {
  const auto whole = std::chrono::floor<std::chrono::seconds>(d);
  return whole.count() == 0 ? QObject::tr("0 s") : QString::fromStdString(format_duration(whole));
}

// "memory 1.2 MiB · CPU 56 ms · workspace 4 KiB\nopen 12 s · idle 3 s · python interpreter
// alive".
QString stats_text(const frontend::SessionInfo& info) {
  const SessionStats stats = info.stats.value_or(SessionStats{});
  return QObject::tr("memory %1 · CPU %2 · workspace %3\nopen %4 · idle %5 · %6")
      .arg(size_of(stats.memory_kb ? std::optional(*stats.memory_kb * 1024) : std::nullopt),
           stats.cpu_ms
               ? QString::fromStdString(format_duration(std::chrono::milliseconds(*stats.cpu_ms)))
               : QObject::tr("not measured"),
           size_of(stats.workspace_bytes), seconds_of(info.age), seconds_of(info.idle),
           stats.interpreter_alive ? QObject::tr("python interpreter alive")
                                   : QObject::tr("no interpreter kept"));
}

}  // namespace

void fill_backend_checklist(QListWidget* list, const BackendList& backends, bool labelled) {
  for (const BackendItem& item : backends.items()) {
    auto* row = new QListWidgetItem(labelled ? item.label() : item.name, list);
    row->setData(Qt::UserRole, item.name);
    row->setFlags(item.available ? (row->flags() | Qt::ItemIsUserCheckable)
                                 : Qt::ItemFlags(Qt::NoItemFlags));
    row->setCheckState(item.available ? Qt::Checked : Qt::Unchecked);
    row->setToolTip(item.available ? item.version : item.reason);
  }
}

void fill_backend_combo(QComboBox* combo, const BackendList& backends) {
  auto* model = new QStandardItemModel(combo);
  for (const BackendItem& item : backends.items()) {
    auto* row = new QStandardItem(item.available ? item.label()
                                                 : QObject::tr("%1 (unavailable)").arg(item.name));
    row->setData(item.name, Qt::UserRole);
    row->setToolTip(item.available ? QObject::tr("%1 %2").arg(item.name, item.version)
                                   : item.reason);
    if (!item.available) row->setFlags(row->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
    model->appendRow(row);
  }
  combo->setModel(model);
  // The first available one, so a fresh inspector never starts on a disabled entry.
  for (int i = 0; i < model->rowCount(); ++i) {
    if (model->item(i)->isEnabled()) {
      combo->setCurrentIndex(i);
      break;
    }
  }
}

RunTab::RunTab(BackendListPtr backends, QWidget* parent)
    : QWidget(parent),
      backends_(std::move(backends)),
      controller_(new RunController(this)),
      editor_(new CodeEditor(this)),
      language_(new QComboBox(this)),
      backend_(new QComboBox(this)),
      environment_(new QComboBox(this)),
      environments_(backends_),
      timeout_(new QDoubleSpinBox(this)),
      memory_(new QSpinBox(this)),
      processes_(new QSpinBox(this)),
      output_cap_(new QSpinBox(this)),
      run_(new QPushButton(tr("Run"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      state_(new QLabel(this)),
      outcome_(new QLabel(this)),
      live_(new QPlainTextEdit(this)),
      memory_graph_(new SparkGraph(
          tr("Memory"),
          [](double bytes) { return QStringLiteral("%1 MiB").arg(bytes / (1 << 20), 0, 'f', 1); },
          this)),
      cpu_graph_(new SparkGraph(
          tr("CPU"), [](double cpus) { return QStringLiteral("%1 %").arg(cpus * 100, 0, 'f', 0); },
          this)),
      inputs_(new QListWidget(this)),
      collect_(new QLineEdit(this)),
      allow_net_(new QLineEdit(this)),
      split_(new QSplitter(Qt::Vertical, this)),
      keep_session_(new QCheckBox(tr("&Keep a session"), this)),
      session_(new QLabel(this)),
      session_stats_(new QLabel(this)),
      session_refresh_(new QTimer(this)),
      session_files_(new QListWidget(this)),
      reset_session_(new QPushButton(tr("Reset"), this)),
      close_session_(new QPushButton(tr("Close"), this)) {
  for (const Language language : kLanguages) {
    language_->addItem(name_of(language), static_cast<int>(language));
  }
  fill_backend_combo(backend_, *backends_);
  timeout_->setRange(0.1, 3600);
  timeout_->setDecimals(1);
  timeout_->setSuffix(tr(" s"));
  timeout_->setValue(std::chrono::duration<double>(kDefaultTimeout).count());
  memory_->setRange(0, 1 << 20);
  memory_->setSuffix(tr(" MiB"));
  memory_->setSpecialValueText(tr("backend default"));
  processes_->setRange(0, 1 << 16);
  processes_->setSpecialValueText(tr("backend default"));
  output_cap_->setRange(1, 1 << 20);
  output_cap_->setSuffix(tr(" KiB"));
  output_cap_->setValue(static_cast<int>(kDefaultOutputBytes / kKiB));
  run_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  run_->setToolTip(tr("Run (Ctrl+Return)"));
  run_->setObjectName(QStringLiteral("run"));
  cancel_->setObjectName(QStringLiteral("cancel"));
  cancel_->setEnabled(false);
  live_->setReadOnly(true);
  live_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  live_->setPlaceholderText(tr("Live output appears here while the code runs"));
  // Past this many lines the live view keeps the last ones; the Result has all it kept.
  live_->setMaximumBlockCount(20000);
  editor_->setPlaceholderText(tr("Paste the code the model wrote"));
  progress_->setTextVisible(true);
  progress_->setFormat(tr("idle"));
  outcome_->setObjectName(QStringLiteral("outcome"));
  outcome_->setAlignment(Qt::AlignCenter);
  outcome_->hide();
  cancel_->setToolTip(tr("Cancel (Esc)"));
  // Esc anywhere in the tab (the editor included) stops the run; idle, it does nothing.
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
  escape->setContext(Qt::WidgetWithChildrenShortcut);
  connect(escape, &QShortcut::activated, this, &RunTab::cancel);

  auto* form = new QFormLayout;
  form->addRow(tr("&Language"), language_);
  form->addRow(tr("&Backend"), backend_);
  // The stored environments (cordon environment add), read again when the tab is shown.
  environment_->setObjectName(QStringLiteral("environment"));
  environment_->addItems(environments_.names());
  environment_->setToolTip(
      tr("The root the code sees: host (this machine's /usr) or a stored environment, pinned "
         "by its digest (namespace and container backends)."));
  form->addRow(tr("&Environment"), environment_);
  form->addRow(tr("&Timeout"), timeout_);
  form->addRow(tr("&Memory"), memory_);
  form->addRow(tr("&Processes"), processes_);
  form->addRow(tr("&Output cap"), output_cap_);
  inputs_->setToolTip(tr("Files placed in the run's working directory"));
  inputs_->setMaximumHeight(90);
  auto* add_input = new QPushButton(tr("Add file…"), this);
  auto* remove_input = new QPushButton(tr("Remove"), this);
  auto* input_buttons = new QHBoxLayout;
  input_buttons->addWidget(add_input);
  input_buttons->addWidget(remove_input);
  form->addRow(tr("&Input files"), inputs_);
  form->addRow(input_buttons);
  collect_->setPlaceholderText(tr("*.png out/*.csv"));
  collect_->setToolTip(tr("Artifact patterns collected after the run, separated by spaces"));
  form->addRow(tr("Colle&ct"), collect_);  // Alt+L is Language
  allow_net_->setObjectName(QStringLiteral("allowNet"));
  allow_net_->setPlaceholderText(tr("none: no network"));
  allow_net_->setToolTip(
      tr("Hosts the code may reach through cordon's proxy (namespace backend), separated by "
         "spaces: pypi.org, *.pythonhosted.org, api.example.org:8443, 10.1.0.0/16. A name "
         "without a port means 80 and 443. Empty: no network at all."));
  form->addRow(tr("Net&work"), allow_net_);
  connect(add_input, &QPushButton::clicked, this, [this] {
    for (const QString& path : QFileDialog::getOpenFileNames(this, tr("Input files"))) {
      add_input_file(path, QFileInfo(path).fileName());
    }
  });
  connect(remove_input, &QPushButton::clicked, this, [this] { delete inputs_->currentItem(); });
  // Sessions (issue #41): calls keep one sandbox, its files and a python interpreter.
  keep_session_->setObjectName(QStringLiteral("keepSession"));
  keep_session_->setToolTip(
      tr("Keep one sandbox across runs: its files, and a python interpreter's variables. A run "
         "that times out restarts the interpreter and keeps the files."));
  session_->setObjectName(QStringLiteral("session"));
  session_->setWordWrap(true);
  session_stats_->setObjectName(QStringLiteral("sessionStats"));
  session_stats_->setWordWrap(true);
  session_stats_->setToolTip(
      tr("What the session holds now: its sandbox's memory, the CPU time of its calls, the "
         "bytes its workspace uses, how long it has been open and idle"));
  session_refresh_->setInterval(kSessionRefreshMs);
  connect(session_refresh_, &QTimer::timeout, this, &RunTab::show_session_stats);
  session_files_->setObjectName(QStringLiteral("sessionFiles"));
  session_files_->setMaximumHeight(90);
  session_files_->setToolTip(tr("The session's workspace: its working directory"));
  reset_session_->setObjectName(QStringLiteral("resetSession"));
  reset_session_->setToolTip(tr("A fresh interpreter; the files stay"));
  close_session_->setObjectName(QStringLiteral("closeSession"));
  close_session_->setToolTip(tr("End the session: its files and processes are gone"));
  // One row while no session is open (the tab fits 1024x640); the label, the workspace and
  // the buttons show only with one.
  auto* session_row = new QHBoxLayout;
  session_row->addWidget(keep_session_, 1);
  session_row->addWidget(reset_session_);
  session_row->addWidget(close_session_);
  form->addRow(session_row);
  form->addRow(session_);
  form->addRow(session_stats_);
  form->addRow(session_files_);
  connect(keep_session_, &QCheckBox::toggled, this, [this](bool keep) {
    controller_->set_keep_session(keep);
    show_session();
  });
  connect(reset_session_, &QPushButton::clicked, this, [this] {
    const Status reset = controller_->reset_session();
    show_session();
    state_->setText(reset ? tr("session reset: a fresh interpreter, files kept")
                          : QString::fromStdString(reset.error().describe()));
  });
  connect(close_session_, &QPushButton::clicked, this, [this] {
    controller_->close_session();
    show_session();
  });
  // Another backend or environment chosen (or the chosen environment removed).
  connect(this, &RunTab::settings_changed, this, &RunTab::close_session_if_moved);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  form->addRow(buttons);
  form->addRow(state_);
  form->addRow(outcome_);
  auto* side = new QWidget(this);
  side->setObjectName(QStringLiteral("sidePanel"));
  side->setLayout(form);
  // The editor and the output get the width: at 1024 px the panel is under 30 % of it.
  side->setMaximumWidth(300);
  state_->setWordWrap(true);

  split_->addWidget(editor_);
  split_->addWidget(live_);
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 2);
  auto* row = new QHBoxLayout;
  row->addWidget(split_, 1);
  row->addWidget(side);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(row, 1);
  auto* graphs = new QHBoxLayout;
  graphs->addWidget(memory_graph_, 1);
  graphs->addWidget(cpu_graph_, 1);
  layout->addLayout(graphs);
  layout->addWidget(progress_);

  connect(run_, &QPushButton::clicked, this, &RunTab::run);
  connect(cancel_, &QPushButton::clicked, this, &RunTab::cancel);
  connect(language_, &QComboBox::currentIndexChanged, this, [this] {
    editor_->set_language(static_cast<Language>(language_->currentData().toInt()));
    emit settings_changed();
  });
  connect(backend_, &QComboBox::currentIndexChanged, this, &RunTab::settings_changed);
  connect(environment_, &QComboBox::currentIndexChanged, this, &RunTab::settings_changed);
  connect(controller_, &RunController::output, this, &RunTab::show_output);
  connect(controller_, &RunController::state_changed, this,
          [this](const QString& state) { state_->setText(tr("state: %1").arg(state)); });
  connect(controller_, &RunController::tick, this, [this](qint64 elapsed) {
    progress_->setValue(static_cast<int>(std::min<qint64>(elapsed, progress_->maximum())));
    progress_->setFormat(
        tr("%1 s of %2 s").arg(elapsed / 1000.0, 0, 'f', 1).arg(timeout_->value()));
  });
  connect(controller_, &RunController::sample, this,
          [this](qint64 elapsed_ms, qint64 memory_bytes, qint64 cpu_usec) {
            if (memory_bytes >= 0)
              memory_graph_->add_point(double(elapsed_ms), double(memory_bytes));
            // CPU as a rate between two samples: CPUs busy (1.0 = one core all the time).
            if (cpu_usec >= 0) {
              if (last_cpu_usec_ >= 0 && elapsed_ms > last_cpu_ms_) {
                cpu_graph_->add_point(
                    double(elapsed_ms),
                    double(cpu_usec - last_cpu_usec_) / 1000.0 / double(elapsed_ms - last_cpu_ms_));
              }
              last_cpu_usec_ = cpu_usec;
              last_cpu_ms_ = elapsed_ms;
            }
          });
  connect(controller_, &RunController::history_error, this, &RunTab::history_error);
  connect(controller_, &RunController::finished, this, [this](const RunResult& result) {
    set_running(false);
    show_outcome(result);
    show_session();
    close_session_if_moved();  // another backend or environment was chosen during the call
    emit run_finished(result);
  });
  show_session();
}

bool RunTab::running() const { return controller_->running(); }

void RunTab::show_session() {
  const QString id = controller_->session_id();
  const bool open = !id.isEmpty();
  session_->setText(
      open ? tr("session %1… · %n call(s)", nullptr, static_cast<int>(controller_->session_calls()))
                 .arg(id.left(8))
           : (controller_->keeps_session() ? tr("the next run opens a session") : QString()));
  session_files_->clear();
  for (const WorkspaceEntry& entry : controller_->session_files()) {
    session_files_->addItem(
        entry.directory ? QString::fromStdString(entry.path) + QLatin1Char('/')
                        : tr("%1 (%2 B)").arg(QString::fromStdString(entry.path)).arg(entry.size));
  }
  session_->setVisible(!session_->text().isEmpty());
  show_session_stats();
  session_stats_->setVisible(open);
  if (open) {
    session_refresh_->start();
  } else {
    session_refresh_->stop();
  }
  session_files_->setVisible(open);
  reset_session_->setVisible(open);
  close_session_->setVisible(open);
  reset_session_->setEnabled(open);
  close_session_->setEnabled(open);
}

void RunTab::show_session_stats() {
  // While a call runs the worker has the session: the figures of before it stay shown.
  if (const std::optional<frontend::SessionInfo> info = controller_->session_info()) {
    session_stats_->setText(stats_text(*info));
  } else if (controller_->session_id().isEmpty()) {
    session_stats_->clear();
  }
}

void RunTab::close_session_if_moved() {
  const QString on = controller_->session_backend();
  const QString in = controller_->session_environment();
  if (on.isEmpty() || controller_->running()) return;  // a running call: checked when it ends
  if (on == backend() && in == environment()) return;
  controller_->close_session();
  show_session();
  state_->setText(
      tr("session on %1 (%2) closed: %3 (%4) is chosen now").arg(on, in, backend(), environment()));
}

void RunTab::set_history_path(std::optional<std::filesystem::path> path) {
  controller_->set_history_path(std::move(path));
}

RunRequest RunTab::request() const {
  RunRequest request;
  request.code = editor_->toPlainText().toStdString();
  request.language = static_cast<Language>(language_->currentData().toInt());
  request.timeout = std::chrono::milliseconds(std::llround(timeout_->value() * 1000));
  if (memory_->value() > 0) request.limits.memory_bytes = memory_->value() * kMiB;
  if (processes_->value() > 0) request.limits.max_processes = processes_->value();
  request.limits.output_bytes = static_cast<std::uint64_t>(output_cap_->value()) * kKiB;
  for (int i = 0; i < inputs_->count(); ++i) {
    const QListWidgetItem* item = inputs_->item(i);
    // Restored from history: the bytes of the recorded run, not a local file.
    const QVariant kept = item->data(kKeptBytesRole);
    if (kept.isValid()) {
      request.input_files[item->text().toStdString()] = kept.toByteArray().toStdString();
      continue;
    }
    // A file that cannot be read goes in empty: the code's own error then says which.
    QFile file(item->data(Qt::UserRole).toString());
    const QByteArray bytes = file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    request.input_files[item->text().toStdString()] = bytes.toStdString();
  }
  for (const QString& glob : collect_->text().split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    request.artifact_globs.push_back(glob.toStdString());
  }
  static const QRegularExpression kSeparators(QStringLiteral("[\\s,]+"));
  for (const QString& entry : allow_net_->text().split(kSeparators, Qt::SkipEmptyParts)) {
    request.network.allow.push_back(entry.toStdString());
  }
  return request;
}

void RunTab::set_allow_net(const QString& entries) { allow_net_->setText(entries); }

void RunTab::add_input_file(const QString& local_path, const QString& name) {
  auto* item = new QListWidgetItem(name, inputs_);
  item->setData(Qt::UserRole, local_path);
  item->setToolTip(local_path);
}

void RunTab::set_collect_globs(const QString& globs) { collect_->setText(globs); }

QString RunTab::backend() const { return backend_->currentData(Qt::UserRole).toString(); }

QString RunTab::environment() const { return environment_->currentText(); }

void RunTab::set_environment(const QString& name) {
  if (environment_->findText(name) < 0) environment_->addItem(name);
  environment_->setCurrentText(name);
}

Result<BackendListPtr> RunTab::backends_in(const QString& name) { return environments_.in(name); }

void RunTab::refresh_environments() {
  if (!environments_.refresh()) return;
  const QString chosen = environment();
  const QSignalBlocker quiet(environment_);
  environment_->clear();
  environment_->addItems(environments_.names());
  const int index = environment_->findText(chosen);
  environment_->setCurrentIndex(std::max(index, 0));
  // Back to host when the chosen one was removed: the plan and tool tabs follow.
  if (index < 0) emit settings_changed();
}

void RunTab::set_backend(const QString& name) {
  const int index = backend_->findData(name, Qt::UserRole);
  if (index >= 0) backend_->setCurrentIndex(index);
}

void RunTab::set_code(const QString& code, Language language) {
  editor_->setPlainText(code);
  language_->setCurrentIndex(language_->findData(static_cast<int>(language)));
}

void RunTab::load(const history::RunRecord& record) {
  set_code(QString::fromStdString(record.code), record.language);
  set_backend(QString::fromStdString(record.backend));
  timeout_->setValue(static_cast<double>(record.timeout_ms) / 1000.0);
  memory_->setValue(
      record.limits.memory_bytes ? static_cast<int>(*record.limits.memory_bytes / kMiB) : 0);
  processes_->setValue(record.limits.max_processes ? static_cast<int>(*record.limits.max_processes)
                                                   : 0);
  output_cap_->setValue(static_cast<int>(effective_output_cap(record.limits) / kKiB));
  // The recorded input files (their bytes as the run had them) and artifact patterns.
  inputs_->clear();
  for (const auto& [name, bytes] : record.input_files) {
    auto* item = new QListWidgetItem(QString::fromStdString(name), inputs_);
    item->setData(kKeptBytesRole, QByteArray::fromStdString(bytes));
    item->setToolTip(tr("As recorded in history (%n byte(s))", nullptr, int(bytes.size())));
  }
  QStringList globs;
  for (const std::string& glob : record.artifact_globs) globs << QString::fromStdString(glob);
  collect_->setText(globs.join(QLatin1Char(' ')));
  // The allow-list the run had (its result's network report), else none.
  QStringList allow;
  if (const auto network = record.result.find("network");
      network != record.result.end() && network->is_object()) {
    for (const auto& entry : network->value("allow", nlohmann::json::array())) {
      if (entry.is_string()) allow << QString::fromStdString(entry.get<std::string>());
    }
  }
  allow_net_->setText(allow.join(QLatin1Char(' ')));
  // The environment it ran in, by name. The Run tab offers host and stored ones only, so a
  // run in an unregistered --rootfs (it has no name) or with none recorded loads as host.
  const bool named = record.environment && !record.environment->name.empty();
  set_environment(named ? QString::fromStdString(record.environment->name)
                        : QString::fromLatin1(environment::kHostName));
}

void RunTab::run() {
  if (controller_->running()) return;
  live_->clear();
  memory_graph_->clear();
  cpu_graph_->clear();
  last_cpu_usec_ = last_cpu_ms_ = -1;
  outcome_->hide();
  progress_->setStyleSheet({});
  const RunRequest request = this->request();
  live_cap_ = OutputCap(effective_output_cap(request.limits));
  progress_->setRange(0, static_cast<int>(effective_timeout(request).count()));
  progress_->setValue(0);
  Result<BackendListPtr> backends = backends_in(environment());
  if (!backends) {
    state_->setText(QString::fromStdString(backends.error().describe()));
    return;
  }
  RunRequest in_environment = request;
  in_environment.environment = (*backends)->environment();
  if (!controller_->start(*backends, backend(), std::move(in_environment))) {
    Backend* b = (*backends)->backend(backend());
    state_->setText(
        b == nullptr && environment() != QLatin1String(environment::kHostName)
            ? tr("backend %1 is not available in environment %2").arg(backend(), environment())
            : tr("backend %1 is not available").arg(backend()));
    return;
  }
  set_running(true);
}

void RunTab::cancel() { controller_->cancel(); }

void RunTab::set_running(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (running) {
    session_refresh_->stop();  // the worker has the session: show_session() restarts it
    state_->setText(tr("state: preparing"));
  } else {
    const QString none = tr("no sample (ended too soon, or the backend cannot measure here)");
    if (memory_graph_->points().empty()) memory_graph_->set_unmeasured(none);
    if (cpu_graph_->points().empty()) cpu_graph_->set_unmeasured(none);
  }
}

void RunTab::show_output(int stream, const QByteArray& chunk) {
  const OutputCap::Take take = live_cap_.take(stream, chunk);
  QTextCursor cursor(live_->document());
  cursor.movePosition(QTextCursor::End);
  QTextCharFormat format;
  if (stream == 1) format.setForeground(QColor(0xc6, 0x28, 0x28));  // stderr
  if (!take.shown.isEmpty()) cursor.insertText(display_text(take.shown), format);
  if (take.cut_now) {
    format.setFontItalic(true);
    format.setForeground(Qt::gray);
    // The run's cap, not the spin box's: it may have been changed since the run started.
    cursor.insertText(tr("\n[%1 cut here: the output cap (%2) is reached; the Result keeps "
                         "what is above]\n")
                          .arg(stream == 1 ? QStringLiteral("stderr") : QStringLiteral("stdout"))
                          .arg(QString::fromStdString(format_size(live_cap_.cap_bytes()))),
                      format);
  }
  live_->ensureCursorVisible();
}

// The end of a run reads as its outcome: the badge of the Result, the bar full in the
// badge's colour, and the code's own wall time (the controller's clock also counts set-up,
// teardown and recording, which made a 230 ms run read "done in 2.63 s").
void RunTab::show_outcome(const RunResult& result) {
  const Badge badge = outcome_badge(result.outcome, result.limit, result.exit_code, result.signal);
  outcome_->setText(badge.text);
  outcome_->setStyleSheet(
      QStringLiteral("padding: 4px; border-radius: 4px; font-weight: bold; color: white; "
                     "background: %1")
          .arg(badge.color.name()));
  outcome_->show();
  progress_->setValue(progress_->maximum());
  progress_->setStyleSheet(
      QStringLiteral("QProgressBar::chunk { background: %1 }").arg(badge.color.name()));
  progress_->setFormat(
      tr("%1 in %2 s").arg(badge.text).arg(double(result.wall_ms) / 1000.0, 0, 'f', 2));
}

void RunTab::save_settings(QSettings& settings) const {
  settings.setValue(QStringLiteral("run/backend"), backend());
  settings.setValue(QStringLiteral("run/language"), language_->currentIndex());
  settings.setValue(QStringLiteral("run/timeout_s"), timeout_->value());
  settings.setValue(QStringLiteral("run/memory_mib"), memory_->value());
  settings.setValue(QStringLiteral("run/processes"), processes_->value());
  settings.setValue(QStringLiteral("run/output_cap_kib"), output_cap_->value());
  settings.setValue(QStringLiteral("run/splitter"), split_->saveState());
}

void RunTab::load_settings(const QSettings& settings) {
  if (settings.contains(QStringLiteral("run/backend"))) {
    set_backend(settings.value(QStringLiteral("run/backend")).toString());
  }
  language_->setCurrentIndex(settings.value(QStringLiteral("run/language"), 0).toInt());
  timeout_->setValue(settings.value(QStringLiteral("run/timeout_s"), timeout_->value()).toDouble());
  memory_->setValue(settings.value(QStringLiteral("run/memory_mib"), 0).toInt());
  processes_->setValue(settings.value(QStringLiteral("run/processes"), 0).toInt());
  output_cap_->setValue(
      settings.value(QStringLiteral("run/output_cap_kib"), output_cap_->value()).toInt());
  split_->restoreState(settings.value(QStringLiteral("run/splitter")).toByteArray());
}

}  // namespace cordon::inspector
