// The inspector's real widgets on the offscreen platform: a snippet runs and its Result
// shows; a long run is cancelled; a timeout shows TIMED OUT; a run made by the CLI shows in
// History and can be re-run; two backends are compared; a corrupt history never stops a
// run. Snippets are escape-free: subprocess for plain runs, namespace where isolation shows.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QAbstractButton>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDesktopServices>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMap>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/catalogue.h"
#include "audit/report.h"
#include "audit_model.h"
#include "audit_tab.h"
#include "code_editor.h"
#include "compare_model.h"
#include "compare_tab.h"
#include "cordon/result_json.h"
#include "cordon/session.h"
#include "frontend/environment.h"
#include "frontend/prompt_render.h"
#include "history_model.h"
#include "history_tab.h"
#include "main_window.h"
#include "outcome_badge.h"
#include "plan_tab.h"
#include "prompts/tool_description.h"
#include "prompts/tool_formats.h"
#include "prompts/tool_render.h"
#include "result_view.h"
#include "run_tab.h"
#include "shell_environment_support.h"
#include "spark_graph.h"
#include "test_env.h"
#include "tool_tab.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {
constexpr int kRunWaitMs = 30000;  // generous: two cores shared with other builds
}

// Receives what QDesktopServices would hand to another application.
class UrlCatcher : public QObject {
  Q_OBJECT

 public:
  QList<QUrl> urls;

 public slots:
  void open(const QUrl& url) { urls << url; }
};

class WidgetsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString history_;
  std::shared_ptr<const BackendList> backends_;
  std::unique_ptr<MainWindow> window_;

  RunTab* run_tab() const { return window_->run_tab(); }

  // One python call of the Run tab's session (Run clicked); false when it did not end.
  bool call_in_tab(QSignalSpy& finished, const QString& code) {
    run_tab()->set_code(code, Language::kPython);
    const qsizetype before = finished.count();
    QTest::mouseClick(run_tab()->run_button(), Qt::LeftButton);
    return finished.count() > before || finished.wait(kRunWaitMs);
  }

  void run_snippet(const QString& code, const QString& backend, double timeout_s = 10) {
    run_tab()->set_code(code, Language::kSh);
    run_tab()->set_backend(backend);
    QCOMPARE(run_tab()->backend(), backend);
    run_tab()->timeout_box()->setValue(timeout_s);
    QVERIFY(run_tab()->run_button()->isEnabled());
    QTest::mouseClick(run_tab()->run_button(), Qt::LeftButton);
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    history_ = test::isolate(dir_);
    backends_ = std::make_shared<const BackendList>();
    QVERIFY2(backends_->backend("subprocess") != nullptr, "the subprocess plugin is built");
  }

  void init() {
    window_ = std::make_unique<MainWindow>(backends_);
    window_->resize(1000, 700);
    window_->show();
  }

  void cleanup() { window_.reset(); }

  void runSnippetShowsResult() {
    run_snippet("echo hello-inspector; echo to-stderr >&2", "subprocess");
    QVERIFY(!run_tab()->run_button()->isEnabled());
    QVERIFY(run_tab()->cancel_button()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kResult));
    QCOMPARE(window_->result_view()->stdout_text(), QString("hello-inspector\n"));
    QCOMPARE(window_->result_view()->stderr_text(), QString("to-stderr\n"));
    QVERIFY(window_->result_view()->json_text().contains("\"outcome\": \"ok\""));
    QVERIFY(run_tab()->live_output()->toPlainText().contains("hello-inspector"));
    QVERIFY(run_tab()->run_button()->isEnabled());
    // Recorded by the inspector, and listed in History.
    QTRY_VERIFY(window_->history_tab()->model()->rowCount() >= 1);
    const auto record = window_->history_tab()->model()->record_at(0);
    QVERIFY(record.has_value());
    QCOMPARE(record->source, std::string("inspector"));
    QCOMPARE(record->code, std::string("echo hello-inspector; echo to-stderr >&2"));
  }

  void failedExitShowsItsCode() {
    run_snippet("exit 7", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("FAILED exit 7"),
                              kRunWaitMs);
  }

  void inputFileInArtifactOut() {
    const QString local = dir_.filePath("numbers.txt");
    QFile input(local);
    QVERIFY(input.open(QIODevice::WriteOnly));
    input.write("3\n4\n");
    input.close();
    run_tab()->add_input_file(local, "in.txt");
    run_tab()->set_collect_globs("*.out");
    run_snippet("sort -r in.txt > result.out; printf 'raw\\377' > bin.out", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    ResultView* view = window_->result_view();
    QCOMPARE(view->artifact_count(), 2);
    // Saved as the raw bytes, whatever the JSON view shows (base64 in the Result).
    QStringList saved;
    for (int i = 0; i < view->artifact_count(); ++i) {
      const QString path = dir_.filePath(QStringLiteral("saved-%1").arg(i));
      QVERIFY(view->save_artifact(i, path));
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      saved << QString::fromLatin1(file.readAll().toHex());
    }
    saved.sort();
    QCOMPARE(saved, (QStringList{QByteArray("4\n3\n").toHex(), QByteArray("raw\xff").toHex()}));

    // Open: the bytes land in a private file named like the artifact, handed to the
    // desktop's handler (caught here instead of starting an application).
    UrlCatcher catcher;
    QDesktopServices::setUrlHandler("file", &catcher, "open");
    const QString opened = view->open_artifact(0);
    QDesktopServices::unsetUrlHandler("file");
    QVERIFY(!opened.isEmpty());
    QCOMPARE(catcher.urls, (QList<QUrl>{QUrl::fromLocalFile(opened)}));
    QVERIFY(opened.endsWith(".out"));
    QFile file(opened);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(saved.contains(QString::fromLatin1(file.readAll().toHex())));
    QVERIFY(view->open_artifact(99).isEmpty());

    // Re-run from History: the recorded input bytes and artifact patterns come back, even
    // with the local file gone.
    QVERIFY(QFile::remove(local));
    run_tab()->set_collect_globs("");
    HistoryTab* history = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    history->refresh();
    history->select_row(0);  // newest first: this run
    history->rerun_selected();
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kRun));
    const RunRequest again = run_tab()->request();
    QVERIFY(again.input_files == (std::map<std::string, std::string>{{"in.txt", "3\n4\n"}}));
    QVERIFY(again.artifact_globs == std::vector<std::string>{"*.out"});
    QSignalSpy finished(run_tab(), &RunTab::run_finished);
    QTest::mouseClick(run_tab()->run_button(), Qt::LeftButton);
    QVERIFY(finished.wait(kRunWaitMs));
    QCOMPARE(view->badge_text(), QString("OK"));
    QCOMPARE(view->artifact_count(), 2);
    // result.out is the sorted input again: "4\n3\n", base64 in the Result.
    QVERIFY2(view->json_text().contains(QByteArray("4\n3\n").toBase64()), "input restored");
  }

  void cancelStopsALongRun() {
    run_snippet("echo started; sleep 60", "subprocess", 120);
    // Cancel once the code is running (its first output has arrived live).
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->live_output()->toPlainText().contains("started"),
                             kRunWaitMs);
    QElapsedTimer timer;
    timer.start();
    QTest::mouseClick(run_tab()->cancel_button(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("CANCELLED"),
                              kRunWaitMs);
    QVERIFY2(timer.elapsed() < 50000, "cancelled well before the 60 s sleep ended");
  }

  void timeoutShowsTimedOut() {
    run_snippet("sleep 30", "subprocess", 0.3);
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("TIMED OUT"),
                              kRunWaitMs);
    // The Run tab says so too, and the bar ends in the badge's colour, full.
    QLabel* outcome = run_tab()->outcome_label();
    QVERIFY(outcome->isVisibleTo(run_tab()));
    QCOMPARE(outcome->text(), QString("TIMED OUT"));
    QProgressBar* bar = run_tab()->progress_bar();
    QCOMPARE(bar->value(), bar->maximum());
    const QString red = outcome_badge(Outcome::kTimedOut, std::nullopt, -1, SIGKILL).color.name();
    QVERIFY2(bar->styleSheet().contains(red), qPrintable(bar->styleSheet()));
    QVERIFY2(outcome->styleSheet().contains(red), qPrintable(outcome->styleSheet()));
    const QString summary = window_->result_view()->summary_text();
    QVERIFY2(summary.contains("did not exit · SIGKILL, sent by cordon at the deadline"),
             qPrintable(summary));
  }

  // The progress text gives the code's wall time from its Result, not the controller's
  // clock (which also counts set-up, teardown and recording); the badge follows each run.
  void runTabShowsEachOutcomeAndWallTime() {
    run_snippet("exit 3", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("FAILED exit 3"),
                              kRunWaitMs);
    QCOMPARE(run_tab()->outcome_label()->text(), QString("FAILED exit 3"));
    const auto wall_ms = nlohmann::json::parse(window_->result_view()->json_text().toStdString())
                             .at("wall_ms")
                             .get<std::int64_t>();
    QCOMPARE(run_tab()->progress_bar()->text(),
             QString("FAILED exit 3 in %1 s").arg(double(wall_ms) / 1000.0, 0, 'f', 2));
    run_snippet("true", "subprocess");
    QVERIFY(!run_tab()->outcome_label()->isVisibleTo(run_tab()));  // cleared by a new run
    QVERIFY(run_tab()->progress_bar()->styleSheet().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(run_tab()->outcome_label()->text(), QString("OK"), kRunWaitMs);
    QVERIFY(run_tab()->outcome_label()->isVisibleTo(run_tab()));
  }

  // stderr reads apart from stdout: red in the live view, its own page in the Result,
  // which opens on it when a failed run wrote there; page titles count lines.
  void stderrIsDistinctAndOpensOnFailure() {
    run_snippet("echo out-line; echo err-1 >&2; echo err-2 >&2; exit 2", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("FAILED exit 2"),
                              kRunWaitMs);
    ResultView* view = window_->result_view();
    QCOMPARE(view->current_page_title(), QString("stderr · 2 lines"));
    QCOMPARE(view->page_title(0), QString("stdout · 1 line"));
    QTextDocument* live = run_tab()->live_output()->document();
    const QTextCursor err = live->find("err-1");
    const QTextCursor out = live->find("out-line");
    QVERIFY(!err.isNull() && !out.isNull());
    QCOMPARE(err.charFormat().foreground().color(), QColor(0xc6, 0x28, 0x28));
    QVERIFY(out.charFormat().foreground().color() != QColor(0xc6, 0x28, 0x28));

    // A success opens on stdout even with stderr; a failure with empty stderr too.
    run_snippet("echo fine; echo note >&2", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(view->badge_text(), QString("OK"), kRunWaitMs);
    QCOMPARE(view->current_page_title(), QString("stdout · 1 line"));
    run_snippet("echo only-out; exit 5", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(view->badge_text(), QString("FAILED exit 5"), kRunWaitMs);
    QCOMPARE(view->current_page_title(), QString("stdout · 1 line"));
  }

  void escapeCancelsARun() {
    run_snippet("echo started; sleep 60", "subprocess", 120);
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->live_output()->toPlainText().contains("started"),
                             kRunWaitMs);
    run_tab()->editor()->setFocus();
    QTest::keyClick(run_tab()->editor(), Qt::Key_Escape);
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("CANCELLED"),
                              kRunWaitMs);
    QCOMPARE(run_tab()->outcome_label()->text(), QString("CANCELLED"));
    QVERIFY2(window_->result_view()->summary_text().contains("SIGKILL, sent by cordon on cancel"),
             qPrintable(window_->result_view()->summary_text()));
  }

  // The live view keeps what the Result keeps (the first output-cap bytes of each stream)
  // and marks the cut; the Result has a banner and the same marker.
  void liveViewAppliesTheOutputCap() {
    run_tab()->output_cap_box()->setValue(1);  // KiB
    run_snippet("i=0; while [ $i -lt 5000 ]; do echo line-$i; i=$((i+1)); done", "subprocess");
    QTRY_VERIFY_WITH_TIMEOUT(!window_->result_view()->badge_text().startsWith("no run"),
                             kRunWaitMs);
    ResultView* view = window_->result_view();
    QVERIFY2(!view->truncation_banner().isEmpty(), "the Result says the output was cut");
    QVERIFY(view->truncation_banner().contains("stdout"));
    const QString live = run_tab()->live_output()->toPlainText();
    const QString marker = "[stdout cut here";
    QVERIFY2(live.contains(marker), qPrintable(live.right(200)));
    QVERIFY2(live.contains("the output cap (1 KiB) is reached"), qPrintable(live.right(200)));
    QVERIFY2(!live.contains("line-4999"), "the live view stops where the Result does");
    const QString kept = view->stdout_text();
    QVERIFY2(kept.contains("[cut here: the output cap (1 KiB) was reached"), qPrintable(kept));
    // The same bytes above both markers.
    const QString live_kept = live.left(live.indexOf(marker)).chopped(1);  // its newline
    QCOMPARE(live_kept, kept.left(kept.indexOf("[cut here")).left(live_kept.size()));
    QCOMPARE(live_kept.size(), 1024);
    QCOMPARE(view->page_title(0).contains("(truncated"), true);
    // An uncut run has neither.
    run_snippet("echo short", "subprocess");
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->run_button()->isEnabled(), kRunWaitMs);
    QCOMPARE(view->stdout_text(), QString("short\n"));
    QVERIFY(view->truncation_banner().isEmpty());
    QVERIFY(!run_tab()->live_output()->toPlainText().contains("cut here"));
  }

  // The Enforced table is as tall as its rows: the last one is inside the viewport.
  void enforcedTableShowsEveryRow() {
    RunResult result;
    result.outcome = Outcome::kOk;
    result.exit_code = 0;
    result.backend = {"namespace", "1"};
    for (const Aspect aspect :
         {Aspect::kTimeout, Aspect::kOutput, Aspect::kMemory, Aspect::kProcesses, Aspect::kNetwork,
          Aspect::kFilesystem, Aspect::kEnvironment, Aspect::kProcessTree, Aspect::kCpu}) {
      result.enforced.push_back({aspect, "a mechanism", "a value"});
    }
    ResultView* view = window_->result_view();
    window_->tabs()->setCurrentIndex(MainWindow::kResult);
    view->show_result(result);
    QTreeWidget* table = view->enforced_table();
    QCOMPARE(table->topLevelItemCount(), 9);
    QTRY_VERIFY(table->isVisible());
    const QRect last = table->visualItemRect(table->topLevelItem(8));
    QVERIFY2(!last.isEmpty() && last.bottom() <= table->viewport()->height(),
             qPrintable(QString("row bottom %1, viewport %2")
                            .arg(last.bottom())
                            .arg(table->viewport()->height())));
    QVERIFY(view->unisolated_banner().isEmpty());  // it isolates
  }

  // The backend that isolates nothing says so in the lists, and its Results warn.
  void unisolatedBackendIsLabelledAndWarned() {
    QComboBox* box = run_tab()->backend_box();
    const int index = box->findData("subprocess", Qt::UserRole);
    QVERIFY(index >= 0);
    QCOMPARE(box->itemText(index), QString("subprocess (no isolation)"));
    const int ns = box->findData("namespace", Qt::UserRole);
    if (ns >= 0) QVERIFY(!box->itemText(ns).contains("no isolation"));
    run_snippet("echo hi", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    QVERIFY2(window_->result_view()->unisolated_banner().contains("No isolation: subprocess"),
             qPrintable(window_->result_view()->unisolated_banner()));
  }

  // Each Alt letter opens one thing: on every tab, the menus and the controls shown have
  // distinct mnemonics (Alt+T once opened both Tool description and Timeout).
  void mnemonicsNeverClash() {
    for (int tab = 0; tab < window_->tabs()->count(); ++tab) {
      window_->tabs()->setCurrentIndex(tab);
      QMap<QString, QStringList> owners;
      const auto add = [&](const QString& text) {
        const QString key = QKeySequence::mnemonic(text).toString();
        if (!key.isEmpty()) owners[key] << text;
      };
      for (const QAction* action : window_->menuBar()->actions()) add(action->text());
      for (int i = 0; i < window_->tabs()->count(); ++i) add(window_->tabs()->tabText(i));
      for (const QAbstractButton* button : window_->findChildren<QAbstractButton*>()) {
        if (button->isVisibleTo(window_.get())) add(button->text());
      }
      for (const QLabel* label : window_->findChildren<QLabel*>()) {
        if (label->buddy() != nullptr && label->isVisibleTo(window_.get())) add(label->text());
      }
      for (auto it = owners.cbegin(); it != owners.cend(); ++it) {
        QVERIFY2(it.value().size() == 1, qPrintable(QString("tab %1: %2 opens %3")
                                                        .arg(window_->tabs()->tabText(tab),
                                                             it.key(), it.value().join(" and "))));
      }
    }
  }

  // Ctrl+1..7 open the tabs; Ctrl+Shift+Return compares from anywhere.
  void shortcutsOpenEachTabAndCompare() {
    window_->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window_.get()));
    for (int tab = window_->tabs()->count() - 1; tab >= 0; --tab) {
      QTest::keyClick(window_.get(), Qt::Key(Qt::Key_1 + tab), Qt::ControlModifier);
      QCOMPARE(window_->tabs()->currentIndex(), tab);
    }
    // Compare needs two backends; the namespace one is not on every machine.
    const bool two = backends_->backend("namespace") != nullptr;
    run_tab()->set_code("echo compared-by-key", Language::kSh);
    window_->compare_tab()->check_backends({"subprocess", "namespace"});
    QSignalSpy compared(window_->compare_tab(), &CompareTab::compared);
    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    QTest::keyClick(window_.get(), Qt::Key_Return, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kCompare));
    if (two) QVERIFY(compared.wait(kRunWaitMs));
  }

  // At 1024x640 every tab fits: the window is not pushed larger by minimum sizes, no
  // caption or button text is cut, a side panel takes at most 30 % of the width, and
  // History shows at least 15 rows.
  void everyTabFitsAt1024x640() {
    window_->resize(1024, 640);
    for (int tab = 0; tab < window_->tabs()->count(); ++tab) {
      window_->tabs()->setCurrentIndex(tab);
      QTRY_COMPARE(window_->size(), QSize(1024, 640));
      QCoreApplication::processEvents();
      const QString name = window_->tabs()->tabText(tab);
      QWidget* page = window_->tabs()->currentWidget();
      for (const QLabel* label : page->findChildren<QLabel*>()) {
        if (!label->isVisibleTo(window_.get()) || label->wordWrap() || label->text().isEmpty() ||
            label->textFormat() == Qt::RichText || !label->pixmap().isNull()) {
          continue;
        }
        QVERIFY2(label->width() >= label->sizeHint().width(),
                 qPrintable(QString("%1: caption \"%2\" is %3 px of %4")
                                .arg(name, label->text())
                                .arg(label->width())
                                .arg(label->sizeHint().width())));
      }
      for (const QAbstractButton* button : page->findChildren<QAbstractButton*>()) {
        if (!button->isVisibleTo(window_.get()) || button->text().isEmpty()) continue;
        QVERIFY2(button->width() >= button->sizeHint().width(),
                 qPrintable(QString("%1: button \"%2\" is %3 px of %4")
                                .arg(name, button->text())
                                .arg(button->width())
                                .arg(button->sizeHint().width())));
      }
      if (auto* side = page->findChild<QWidget*>("sidePanel")) {
        QVERIFY2(side->width() <= page->width() * 3 / 10,
                 qPrintable(QString("%1: side panel %2 of %3 px")
                                .arg(name)
                                .arg(side->width())
                                .arg(page->width())));
      }
    }
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    QTableView* table = window_->history_tab()->table();
    const int row = table->verticalHeader()->defaultSectionSize();
    QVERIFY2(table->viewport()->height() >= 15 * row,
             qPrintable(QString("History shows %1 px for rows of %2 px")
                            .arg(table->viewport()->height())
                            .arg(row)));
  }

  // The inspector's own memory is not the code's: with 300 MiB held here, `id -u` on the
  // subprocess backend must not read "largest process 300 MiB" (it read 127152 KiB).
  void theInspectorsMemoryIsNotTheCodesPeak() {
    constexpr std::size_t kHeld = 300u << 20;
    std::vector<char> held(kHeld);
    for (std::size_t i = 0; i < kHeld; i += 4096) held[i] = static_cast<char>(i | 1);
    run_snippet("id -u", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    const auto result = nlohmann::json::parse(window_->result_view()->json_text().toStdString());
    const std::optional<std::int64_t> peak = result_figure(result, "max_rss_kb");
    if (peak) QVERIFY2(*peak < 64 * 1024, qPrintable(window_->result_view()->summary_text()));
    QVERIFY(held[4096] != 0);
  }

  // ANSI colour codes are stripped in both views, never drawn as boxes.
  void ansiCodesAreStripped() {
    run_snippet(R"(printf '\033[31mred\033[0m plain\n')", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    QCOMPARE(window_->result_view()->stdout_text(), QString("red plain\n"));
    QCOMPARE(run_tab()->live_output()->toPlainText(), QString("red plain\n"));
  }

  void historyShowsARunOfTheCli() {
    // posix_spawn rather than QProcess: Qt's vfork-style clone is one ThreadSanitizer cannot
    // follow, and this suite also runs under the tsan preset (tests/sanitizers/README.md).
    std::array<int, 2> err{};
    QVERIFY(::pipe2(err.data(), O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<std::string> args{CORDON_CLI_BINARY, "run", "-b",
                                  "subprocess",      "-c",  "echo from-the-cli; exit 4"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    // environ: our history path (test::isolate) included.
    const int spawned = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(err[1]);
    std::string stderr_text;
    std::array<char, 4096> buf{};
    for (ssize_t n = 0; spawned == 0 && (n = ::read(err[0], buf.data(), buf.size())) > 0;) {
      stderr_text.append(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(err[0]);
    QCOMPARE(spawned, 0);
    int status = 0;
    QCOMPARE(::waitpid(pid, &status, 0), pid);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 4);
    QVERIFY2(stderr_text.find("not recorded") == std::string::npos, "the CLI recorded the run");

    HistoryTab* tab = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    tab->refresh();
    QTest::keyClicks(tab->search_box(), "from-the-cli");
    QCOMPARE(tab->model()->rowCount(), 1);
    // The source filter offers the CLI's runs and keeps to them.
    const int cli_item = tab->source_box()->findData(QString("cli"));
    QVERIFY(cli_item > 0);
    tab->source_box()->setCurrentIndex(cli_item);
    QCOMPARE(tab->model()->source_filter(), QString("cli"));
    QCOMPARE(tab->model()->rowCount(), 1);
    tab->source_box()->setCurrentIndex(0);  // all sources
    QCOMPARE(tab->model()->source_filter(), QString());
    QCOMPARE(tab->model()->index(0, HistoryModel::kSource).data().toString(), QString("cli"));
    QCOMPARE(tab->model()->index(0, HistoryModel::kOutcome).data().toString(),
             QString("FAILED exit 4"));
    // The CLI ran on the host's /usr: the Environment column and its filter say so.
    QCOMPARE(tab->model()->index(0, HistoryModel::kEnvironment).data().toString(), QString("host"));
    const int host_item = tab->environment_box()->findData(QString("host"));
    QVERIFY(host_item > 0);
    tab->environment_box()->setCurrentIndex(host_item);
    QCOMPARE(tab->model()->environment_filter(), QString("host"));
    QCOMPARE(tab->model()->rowCount(), 1);
    tab->environment_box()->setCurrentIndex(0);  // all environments
    QCOMPARE(tab->model()->environment_filter(), QString());
    tab->select_row(0);
    QCOMPARE(tab->result_view()->badge_text(), QString("FAILED exit 4"));
    tab->refresh();  // e.g. the tab shown again: the selection and its Result stay
    QCOMPARE(tab->result_view()->badge_text(), QString("FAILED exit 4"));
    QCOMPARE(tab->result_view()->stdout_text(), QString("from-the-cli\n"));

    tab->load_selected();
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kRun));
    QCOMPARE(run_tab()->editor()->toPlainText(), QString("echo from-the-cli; exit 4"));
    QCOMPARE(run_tab()->backend(), QString("subprocess"));
    QVERIFY(!run_tab()->running());  // loaded only

    // Delete can be undone: the same run comes back, selected.
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    tab->select_row(0);
    QVERIFY(!tab->undo_button()->isVisibleTo(tab));
    tab->delete_selected();
    QCOMPARE(tab->model()->rowCount(), 0);
    QVERIFY(tab->undo_button()->isVisibleTo(tab));
    tab->undo_delete();
    QCOMPARE(tab->model()->rowCount(), 1);
    QVERIFY(!tab->undo_button()->isVisibleTo(tab));
    QCOMPARE(tab->result_view()->stdout_text(), QString("from-the-cli\n"));
    tab->delete_selected();
    QCOMPARE(tab->model()->rowCount(), 0);
  }

  // The environment filter beside the source filter (issue #17): "All environments", then
  // each environment of the stored runs, an unregistered --rootfs shown as the column shows
  // it (its whole digest in the tooltip); the chosen one stays offered, and chosen, after
  // its last run is deleted, and goes once another is chosen.
  void historyFiltersByEnvironment() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("env.sqlite3").toStdString());
    const std::string digest = "sha256:" + std::string(64, 'c');
    const QString shown = QString::fromUtf8("--rootfs sha256:cccccccccccc\u2026");
    {
      auto store = history::HistoryStore::open(path);
      QVERIFY(store);
      auto add = [&](const std::string& code, std::optional<EnvironmentRef> environment,
                     std::int64_t started_ms) {
        RunRequest request;
        request.code = code;
        RunResult result;
        result.outcome = Outcome::kOk;
        result.backend = {"namespace", "1"};
        result.environment = std::move(environment);
        const auto started =
            std::chrono::system_clock::time_point(std::chrono::milliseconds(started_ms));
        return store->add(history::make_record(request, result, started, started, "cli"))
            .has_value();
      };
      QVERIFY(add("echo sci", EnvironmentRef{.name = "sci", .digest = "sha256:5c1"}, 1000));
      QVERIFY(add("echo rootfs", EnvironmentRef{.name = "", .digest = digest}, 2000));
      QVERIFY(add("echo none", std::nullopt, 3000));
    }
    HistoryTab tab;
    QVERIFY(tab.open(path));
    QComboBox* box = tab.environment_box();
    QCOMPARE(box->count(), 3);
    QCOMPARE(box->itemText(0), QString("All environments"));
    QCOMPARE(box->itemText(1), QString("sci"));
    QCOMPARE(box->itemData(1).toString(), QString("sci"));
    QVERIFY(!box->itemData(1, Qt::ToolTipRole).isValid());
    QCOMPARE(box->itemText(2), shown);
    QCOMPARE(box->itemData(2).toString(), QString::fromStdString(digest));
    QCOMPARE(box->itemData(2, Qt::ToolTipRole).toString(), QString::fromStdString(digest));

    box->setCurrentIndex(2);
    QCOMPARE(tab.model()->environment_filter(), QString::fromStdString(digest));
    QCOMPARE(tab.model()->rowCount(), 1);
    QCOMPARE(tab.model()->index(0, HistoryModel::kEnvironment).data().toString(), shown);
    QCOMPARE(tab.source_box()->currentIndex(), 0);  // the other filter is left as it was
    tab.select_row(0);
    tab.delete_selected();
    QCOMPARE(tab.model()->rowCount(), 0);
    QCOMPARE(box->currentIndex(), 2);
    QCOMPARE(box->itemData(2).toString(), QString::fromStdString(digest));
    box->setCurrentIndex(0);
    QCOMPARE(tab.model()->environment_filter(), QString());
    QCOMPARE(tab.model()->rowCount(), 2);
    QCOMPARE(box->count(), 2);  // no run and no longer chosen: not offered
    QCOMPARE(box->itemData(1).toString(), QString("sci"));
  }

  // Re-run runs; the detail pane shows the newest run without a click; the list shows a
  // preview of the code beyond its first line, dates on one line, at least 15 rows.
  void historyRerunRunsAndShowsTheNewest() {
    run_snippet("import os\necho history-rerun-first", "subprocess");
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->run_button()->isEnabled(), kRunWaitMs);
    run_snippet("echo history-rerun-second; exit 6", "subprocess");
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->run_button()->isEnabled(), kRunWaitMs);
    HistoryTab* tab = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);  // refreshes
    QTRY_VERIFY(tab->model()->rowCount() >= 2);
    QTest::keyClicks(tab->search_box(), "history-rerun-");
    QTRY_COMPARE(tab->model()->rowCount(), 2);
    // The newest (second) run is shown without a click.
    QCOMPARE(tab->result_view()->badge_text(), QString("FAILED exit 6"));
    const int first = tab->model()->newest_row() == 0 ? 1 : 0;
    const QString preview = tab->model()->index(first, HistoryModel::kCode).data().toString();
    QVERIFY2(preview.contains("import os") && preview.contains("echo history-rerun-first"),
             qPrintable(preview));
    QVERIFY(!tab->table()->wordWrap());

    tab->select_row(first);
    const int before = tab->model()->rowCount();
    tab->rerun_selected();
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kRun));
    QVERIFY(run_tab()->running());  // Re-run runs
    QTRY_VERIFY_WITH_TIMEOUT(run_tab()->run_button()->isEnabled(), kRunWaitMs);
    QCOMPARE(window_->result_view()->stdout_text().contains("history-rerun-first"), true);
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    QTRY_COMPARE(tab->model()->rowCount(), before + 1);
  }

  // Figures a run did not measure read "not measured", for a run of this build and for a
  // history row of result schema 1 (which wrote 0 for an unmeasured peak RSS).
  // The Run tab's Network field is the run's allow-list (issue #16); a run loaded from
  // history gets the list it had; empty is no network.
  void runTabCarriesTheAllowList() {
    QVERIFY(run_tab()->request().network.allow.empty());  // a new session: no network
    run_tab()->set_allow_net("pypi.org, *.pythonhosted.org  10.1.0.0/16");
    QCOMPARE(run_tab()->request().network.allow,
             (std::vector<std::string>{"pypi.org", "*.pythonhosted.org", "10.1.0.0/16"}));
    RunRequest request;
    request.code = "echo loaded";
    RunResult result;
    result.outcome = Outcome::kOk;
    result.backend = {"namespace", "1"};
    result.network = NetworkReport{};
    result.network->access.allow = {"api.example.org:8443"};
    history::RunRecord record = history::make_record(
        request, result, std::chrono::system_clock::now(), std::chrono::system_clock::now(), "cli");
    run_tab()->load(record);
    QCOMPARE(run_tab()->request().network.allow,
             (std::vector<std::string>{"api.example.org:8443"}));
    record.result["network"] = nullptr;
    run_tab()->load(record);
    QVERIFY(run_tab()->request().network.allow.empty());
  }

  // The environment the code runs in (issue #17): host by default, recorded in the Result;
  // a name the store does not have starts nothing; a re-run takes the recorded one.
  void runTabRunsInTheChosenEnvironment() {
    QCOMPARE(run_tab()->environment(), QString("host"));
    run_snippet("echo in-host", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    const QString json_text = window_->result_view()->json_text();
    QVERIFY2(json_text.contains("\"environment\": {") && json_text.contains("\"name\": \"host\""),
             qPrintable(json_text));
    QVERIFY(window_->result_view()->summary_text().contains("environment host (the host's /usr)"));

    run_tab()->set_environment("missing");
    QVERIFY(!run_tab()->backends_in("missing").has_value());
    run_snippet("echo never", "subprocess");
    QVERIFY(run_tab()->run_button()->isEnabled());  // nothing started

    RunRequest request;
    request.code = "echo loaded";
    RunResult result;
    result.outcome = Outcome::kOk;
    result.backend = {"namespace", "1"};
    result.environment = EnvironmentRef{.name = "sci", .digest = "sha256:00"};
    history::RunRecord record = history::make_record(
        request, result, std::chrono::system_clock::now(), std::chrono::system_clock::now(), "cli");
    run_tab()->load(record);
    QCOMPARE(run_tab()->environment(), QString("sci"));
    result.environment.reset();
    record = history::make_record(request, result, std::chrono::system_clock::now(),
                                  std::chrono::system_clock::now(), "cli");
    run_tab()->load(record);
    QCOMPARE(run_tab()->environment(), QString("host"));
  }

  // A run with a network allow-list (issue #16): its connections on a page of their own,
  // the denied ones counted in its title; a run without one has no such page.
  void networkConnectionsHaveTheirPage() {
    ResultView* view = window_->result_view();
    RunResult plain;
    plain.outcome = Outcome::kOk;
    plain.backend = {"namespace", "1"};
    view->show_result(plain);
    QVERIFY(!view->network_page_shown());
    RunResult r = plain;
    NetworkReport report;
    report.access.allow = {"pypi.org"};
    report.connections = {
        {"CONNECT", "pypi.org", 443, "151.101.0.223", true, "allowed by pypi.org", 2048, 1 << 20},
        {"GET", "evil.test", 80, "", false, "evil.test:80 is not on the allow-list", 0, 0}};
    report.limit_reached = "bytes";
    r.network = report;
    view->show_result(r);
    QVERIFY(view->network_page_shown());
    QTreeWidget* table = view->network_table();
    QCOMPARE(table->topLevelItemCount(), 2);
    QCOMPARE(table->topLevelItem(0)->text(0), QString("allowed"));
    QCOMPARE(table->topLevelItem(0)->text(1), QString("CONNECT pypi.org:443"));
    QCOMPARE(table->topLevelItem(0)->text(2), QString("151.101.0.223"));
    QCOMPARE(table->topLevelItem(0)->text(4), QString("1 MiB"));
    QCOMPARE(table->topLevelItem(1)->text(0), QString("denied"));
    QCOMPARE(table->topLevelItem(1)->text(5), QString("evil.test:80 is not on the allow-list"));
    QCOMPARE(view->page_title(4), QString("Network (2, 1 denied) · bytes limit reached"));
    view->show_result(plain);
    QVERIFY(!view->network_page_shown());
  }

  // A session's call shows its session and index, the cell's value and a lost interpreter;
  // a one-shot run shows none of them.
  void aSessionsCallShowsItsValueAndALostInterpreter() {
    RunResult call;
    call.outcome = Outcome::kOk;
    call.exit_code = 0;
    call.backend = {"namespace", "1"};
    ResultView* view = window_->result_view();
    view->show_result(call);
    QString summary = view->summary_text();
    QVERIFY2(!summary.contains("session") && !summary.contains("value"), qPrintable(summary));
    call.session = SessionCallRef{.id = "3f2a9c01" + std::string(24, '0'), .call = 4};
    call.value = "42";
    call.state_lost = true;
    view->show_result(call);
    summary = view->summary_text();
    QVERIFY2(summary.contains("session 3f2a9c01… · call 4"), qPrintable(summary));
    QVERIFY2(summary.contains("value 42"), qPrintable(summary));
    // The words every front end says (cordon/session.h), not a copy of them.
    QVERIFY2(summary.contains(QString::fromStdString(std::string(kStateLostWords))),
             qPrintable(summary));
  }

  void unmeasuredFiguresReadNotMeasured() {
    RunResult stopped;
    stopped.outcome = Outcome::kTimedOut;
    stopped.timed_out = true;
    stopped.signal = SIGKILL;
    stopped.wall_ms = 1000;
    stopped.memory_peak_kb = 752;
    stopped.backend = {"namespace", "1"};
    ResultView* view = window_->result_view();
    view->show_result(stopped);
    QCOMPARE(view->badge_text(), QString("TIMED OUT"));
    QString summary = view->summary_text();
    QVERIFY2(summary.contains("CPU not measured"), qPrintable(summary));
    QVERIFY2(summary.contains("largest process not measured"), qPrintable(summary));
    QVERIFY2(summary.contains("memory peak 752 KiB"), qPrintable(summary));
    QVERIFY2(summary.contains("did not exit · SIGKILL, sent by cordon at the deadline"),
             qPrintable(summary));

    {
      auto store = history::HistoryStore::open(history_.toStdString());
      QVERIFY(store);
      RunRequest request;
      request.code = "echo schema-one-row";
      history::RunRecord record =
          history::make_record(request, stopped, std::chrono::system_clock::now(),
                               std::chrono::system_clock::now(), "cli");
      record.result["schema_version"] = 1;  // as the schema-1 build wrote it
      record.result["signal"] = 0;
      record.result["cpu_ms"] = 0;
      record.result["max_rss_kb"] = 0;
      QVERIFY(store->add(record));
    }
    HistoryTab* tab = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    tab->refresh();
    QTest::keyClicks(tab->search_box(), "schema-one-row");
    QCOMPARE(tab->model()->rowCount(), 1);
    tab->select_row(0);
    QCOMPARE(tab->result_view()->badge_text(), QString("TIMED OUT"));
    summary = tab->result_view()->summary_text();
    QVERIFY2(summary.contains("CPU 0 ms"), qPrintable(summary));  // may have been measured
    QVERIFY2(summary.contains("largest process not measured"), qPrintable(summary));
    QVERIFY2(summary.contains("memory peak 752 KiB"), qPrintable(summary));
    QVERIFY2(summary.contains("signal not recorded"), qPrintable(summary));  // never "signal 0"
    QVERIFY(tab->result_view()->json_text().contains("\"schema_version\": 1"));
    tab->delete_selected();
  }

  void compareTwoBackends() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    // The uid the code sees: root's 0 without isolation, 65534 in the namespace sandbox.
    run_tab()->set_code("id -u", Language::kSh);
    CompareTab* tab = window_->compare_tab();
    tab->check_backends({"subprocess", "namespace"});
    QSignalSpy compared(tab, &CompareTab::compared);
    tab->compare();
    QVERIFY(compared.wait(kRunWaitMs) || compared.count() == 1);
    const CompareModel* model = tab->model();
    // Columns in the registry's order.
    const int plain = static_cast<int>(model->backends().indexOf("subprocess"));
    const int isolated = static_cast<int>(model->backends().indexOf("namespace"));
    QCOMPARE(model->columnCount(), 2);
    QVERIFY(plain >= 0 && isolated >= 0);
    QCOMPARE(model->index(CompareModel::kOutcome, plain).data().toString(), QString("OK"));
    QCOMPARE(model->index(CompareModel::kOutcome, isolated).data().toString(), QString("OK"));
    QVERIFY(!model->differs(CompareModel::kOutcome));
    QCOMPARE(model->index(CompareModel::kStdout, plain).data().toString(),
             QString::number(::geteuid()));
    QCOMPARE(model->index(CompareModel::kStdout, isolated).data().toString(), QString("65534"));
    QCOMPARE(model->differs(CompareModel::kStdout), ::geteuid() != 65534);
  }

  // Issue #11 item 15, the way it was reported: Compare with every backend ticked, again
  // and again, on the backends the inspector made once. Subprocess runs came back
  // "clone: No such file or directory" (their cgroup removed under them) while the
  // namespace and container runs went on beside them.
  void compareEveryBackendRepeatedly() {
    QStringList names;
    for (const char* name : {"subprocess", "namespace", "container"}) {
      if (backends_->backend(name) != nullptr) names << name;
    }
    if (names.size() < 3 && test::require_kernel_features()) QFAIL("a backend is unavailable");
    if (names.size() < 2) QSKIP("fewer than two backends available here");
    run_tab()->set_code("echo same", Language::kSh);
    CompareTab* tab = window_->compare_tab();
    tab->check_backends(names);
    QStringList failures;
    constexpr int kRounds = 12;
    for (int round = 0; round < kRounds; ++round) {
      QSignalSpy compared(tab, &CompareTab::compared);
      tab->compare();
      QVERIFY(compared.wait(kRunWaitMs) || compared.count() == 1);
      const CompareModel* model = tab->model();
      QCOMPARE(model->columnCount(), names.size());
      for (int column = 0; column < model->columnCount(); ++column) {
        const std::optional<RunResult>& r = model->result(column);
        QVERIFY(r.has_value());
        if (r->outcome != Outcome::kOk || r->stdout_data != "same\n") {
          failures << QString("round %1, %2: %3 %4")
                          .arg(round)
                          .arg(model->backends().at(column),
                               QString::fromStdString(std::string(to_string(r->outcome))),
                               QString::fromStdString(r->error.value_or(r->stderr_data)));
        }
      }
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
  }

  void planDescribesTheChosenBackend() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    run_tab()->set_backend("namespace");
    window_->tabs()->setCurrentIndex(MainWindow::kPlan);
    const QString plan = window_->plan_tab()->plan_text();
    QVERIFY2(plan.contains("seccomp"), qPrintable(plan));
    QVERIFY2(plan.contains("namespace"), qPrintable(plan));
  }

 private:  // helpers, not test functions
  // What the core renderer gives for the Run tab's backend and limits, without a report
  // (the tests' audit directory is empty): the reference for the tab's text and exports.
  Result<std::string> core_render(const QString& backend, std::string_view format,
                                  bool unverified) const {
    const RunRequest request = run_tab()->request();
    Result<prompts::ToolTemplate> tool = prompts::find_template("run_code", std::nullopt);
    if (!tool) return std::unexpected(tool.error());
    const prompts::RenderContext context{
        .backend_name = backend.toStdString(),
        .capabilities = backends_->backend(backend)->capabilities(request.limits),
        .timeout = effective_timeout(request),
        .languages = frontend::available_languages(*backends_->backend(backend)),
        .report = nullptr,
        .unverified = unverified,
        .network = {},
        // The environment, as `cordon prompt` states it (the host's here).
        .software = backends_->software()};
    Result<prompts::RenderedTool> rendered = prompts::render_tool(*tool, context);
    if (!rendered) return std::unexpected(rendered.error());
    return prompts::format_tool(*rendered, format);
  }

 private slots:
  void toolDescriptionExportsEachFormat() {
    run_tab()->set_backend("subprocess");
    run_tab()->timeout_box()->setValue(7);
    window_->tabs()->setCurrentIndex(MainWindow::kTool);
    ToolTab* tab = window_->tool_tab();
    QVERIFY2(tab->proof_text().contains("No stored audit report"), qPrintable(tab->proof_text()));
    // Without a report a claim is refused as the core refuses it, in the GUI's words.
    tab->unverified_box()->setChecked(false);
    tab->format_box()->setCurrentText("text");
    const Result<std::string> strict = core_render("subprocess", "text", false);
    QVERIFY(!strict.has_value());
    QString refusal = QString::fromStdString(strict.error().message);
    refusal.replace("run `cordon audit --backend subprocess`",
                    "run the audit of subprocess in the Audit tab");
    refusal.replace("pass --unverified", "tick Unverified");
    QCOMPARE(tab->text(), "Not rendered: " + refusal);
    QVERIFY(!tab->text().contains("--"));

    tab->unverified_box()->setChecked(true);
    for (const std::string_view format : prompts::kToolFormats) {
      const QString name = QString::fromLatin1(format.data(), qsizetype(format.size()));
      tab->format_box()->setCurrentText(name);
      QCOMPARE(tab->format_box()->currentText(), name);
      const Result<std::string> expected = core_render("subprocess", format, true);
      QVERIFY2(expected.has_value(), name.toLatin1());
      const QString want = QString::fromStdString(*expected);
      QCOMPARE(tab->text(), want);
      // The subprocess backend says it does not isolate, in every format; the timeout is
      // the Run tab's.
      QVERIFY2(want.contains("There is NO isolation"), qPrintable(want));
      QVERIFY2(want.contains("at most 7"), qPrintable(want));
      const QString path = dir_.filePath("tool-" + name);
      QVERIFY(tab->export_to(path));
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QCOMPARE(file.readAll(), QByteArray::fromStdString(*expected));
      tab->copy_to_clipboard();
      QCOMPARE(QGuiApplication::clipboard()->text(), want);
    }
    // One version against itself: no sentence differs.
    tab->diff_from_box()->setCurrentIndex(tab->diff_to_box()->currentIndex());
    QVERIFY2(tab->diff_text().startsWith("(the two versions render the same text)"),
             qPrintable(tab->diff_text()));
    QVERIFY(!tab->diff_text().contains("\n+ "));
  }

  void toolDescriptionOfAnIsolatingBackendNeedsProof() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    run_tab()->set_backend("namespace");
    window_->tabs()->setCurrentIndex(MainWindow::kTool);
    ToolTab* tab = window_->tool_tab();
    tab->format_box()->setCurrentText("text");
    tab->unverified_box()->setChecked(false);
    // No report: "isolated sandbox" is a claim, refused.
    QVERIFY2(tab->text().startsWith("Not rendered: ") && tab->text().contains("no audit report"),
             qPrintable(tab->text()));
    // In the GUI's words, not the command line's.
    QVERIFY2(tab->text().contains("tick Unverified") &&
                 tab->text().contains("run the audit of namespace in the Audit tab") &&
                 !tab->text().contains("--"),
             qPrintable(tab->text()));
    QVERIFY(!tab->export_to(dir_.filePath("refused.txt")));
    tab->unverified_box()->setChecked(true);
    QVERIFY2(tab->text().contains("[unverified] The code runs in an isolated sandbox."),
             qPrintable(tab->text()));
    const Result<std::string> expected = core_render("namespace", "text", true);
    QVERIFY(expected.has_value());
    QCOMPARE(tab->text(), QString::fromStdString(*expected));

    // The Run tab's allow-list is the description's: the hosts named, a report made with the
    // list needed (the Audit tab's has none: the command line that makes one is given).
    run_tab()->set_allow_net("127.0.0.2:9");
    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    window_->tabs()->setCurrentIndex(MainWindow::kTool);
    QVERIFY2(tab->proof_text().contains("with the Run tab's network allow-list"),
             qPrintable(tab->proof_text()));
    QVERIFY2(tab->text().contains("[unverified] Network access is limited to 127.0.0.2:9."),
             qPrintable(tab->text()));
    tab->unverified_box()->setChecked(false);
    QVERIFY2(tab->text().contains("run `cordon audit --backend namespace --allow-net 127.0.0.2:9`"),
             qPrintable(tab->text()));
    run_tab()->set_backend("subprocess");
    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    window_->tabs()->setCurrentIndex(MainWindow::kTool);
    QVERIFY2(tab->text().contains("the subprocess backend cannot carry a network allow-list"),
             qPrintable(tab->text()));
    run_tab()->set_allow_net("");
    tab->unverified_box()->setChecked(true);
  }

 private:
  // Audits `attempts` on `backend` through the tab and waits for the end.
  void audit_through_tab(const QString& backend, const QStringList& attempts) {
    window_->tabs()->setCurrentIndex(MainWindow::kAudit);
    AuditTab* tab = window_->audit_tab();
    tab->check_backends({backend});
    tab->check_attempts(attempts);
    QSignalSpy audited(tab, &AuditTab::audited);
    tab->audit();
    QVERIFY(tab->running());
    QVERIFY(!tab->run_button()->isEnabled());
    QVERIFY(audited.wait(240000));
    QCOMPARE(audited.at(0).at(0).toInt(), 0);  // a partial audit is never stored
    QVERIFY2(tab->status_text().startsWith("Audit finished"), qPrintable(tab->status_text()));
    QCOMPARE(tab->progress()->maximum(), int(attempts.size()));
    QCOMPARE(tab->progress()->value(), int(attempts.size()));
    QCOMPARE(tab->model()->rowCount(), int(attempts.size()));
    QCOMPARE(tab->model()->backends(), QStringList{backend});
    QVERIFY(tab->run_button()->isEnabled());
  }

  QString verdict_of(const QString& attempt, const QString& backend) const {
    const AuditModel* model = window_->audit_tab()->model();
    const audit::AttemptVerdict* v = model->verdict(model->row_of(attempt), backend);
    return v != nullptr ? verdict_cell(*v) : QString("missing");
  }

 private slots:
  void liveMemoryGraphRisesDuringANamespaceRun() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    // One second growing to 50 MiB, far under the 512 MiB default limit.
    run_tab()->set_code(
        "import time\nchunks = []\nfor _ in range(10):\n"
        "    chunks.append(b'x' * (5 << 20))\n    time.sleep(0.1)\nprint('held', len(chunks))",
        Language::kPython);
    run_tab()->set_backend("namespace");
    run_tab()->timeout_box()->setValue(20);
    QSignalSpy finished(run_tab(), &RunTab::run_finished);
    QTest::mouseClick(run_tab()->run_button(), Qt::LeftButton);
    QVERIFY(finished.wait(kRunWaitMs));
    QCOMPARE(window_->result_view()->badge_text(), QString("OK"));
    const std::vector<QPointF>& points = run_tab()->memory_graph()->points();
    QVERIFY2(points.size() >= 3, qPrintable(run_tab()->memory_graph()->caption()));
    // The highest, not the last: a last sample may catch Python freeing at exit.
    const double highest = std::ranges::max(points, {}, &QPointF::y).y();
    QVERIFY2(highest > points.front().y() + (20 << 20), "memory rose by > 20 MiB");
    QVERIFY(points.back().x() >= points.front().x());
    QVERIFY2(run_tab()->memory_graph()->caption().endsWith(" MiB"),
             qPrintable(run_tab()->memory_graph()->caption()));
    // Sizes in KiB/MiB, the sandbox's peak against the limit it ran under.
    const QString summary = window_->result_view()->summary_text();
    QVERIFY2(QRegularExpression(R"(memory peak [0-9.]+ MiB of the 512 MiB limit)")
                 .match(summary)
                 .hasMatch(),
             qPrintable(summary));
  }

  void auditSubsetBlockedOnNamespace() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    // Harmless attempts only: a loopback connection and a ptrace call.
    audit_through_tab("namespace", {"net-loopback-tcp", "sys-ptrace"});
    QCOMPARE(verdict_of("net-loopback-tcp", "namespace"), QString("BLOCKED"));
    QCOMPARE(verdict_of("sys-ptrace", "namespace"), QString("BLOCKED"));
    AuditTab* tab = window_->audit_tab();
    tab->select_row(tab->model()->row_of("net-loopback-tcp"));
    QVERIFY2(tab->evidence_text().startsWith("namespace: BLOCKED (claims enforced) — "),
             qPrintable(tab->evidence_text()));
    QVERIFY2(tab->evidence_text().contains("control:"), qPrintable(tab->evidence_text()));
    QCOMPARE(tab->reports()->topLevelItemCount(), 0);  // nothing stored
  }

  // The Audit tab audits in a chosen environment (issue #17): its report is what proves that
  // environment's description. A backend that cannot show one (subprocess) is refused with
  // the reason, and the positive controls still run on the host's subprocess backend.
  void auditInAStoredEnvironment() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    if (!cordon::testing::have_shell_environment()) {
      QSKIP("the shell environment is made from an x86_64 Debian host's files");
    }
    // A store every uid can traverse: as root, the sandbox's set-up process opens the tree
    // as the run's own host uid, which cannot enter the 0700 test directory.
    const std::filesystem::path base =
        std::filesystem::path("/var/tmp") / ("cordon-audit-env-" + std::to_string(::getpid()));
    std::filesystem::remove_all(base);
    const QByteArray before = qgetenv("CORDON_ENVIRONMENTS_DIR");
    qputenv("CORDON_ENVIRONMENTS_DIR", QByteArray::fromStdString((base / "store").string()));
    const auto restore = qScopeGuard([&] {
      qputenv("CORDON_ENVIRONMENTS_DIR", before);
      std::filesystem::remove_all(base);
    });
    const std::filesystem::path tree = cordon::testing::make_shell_environment(base / "tree");
    QVERIFY(environment::Store(base / "store").add("tiny", tree, nullptr).has_value());

    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    window_->tabs()->setCurrentIndex(MainWindow::kAudit);  // reads the store again
    AuditTab* tab = window_->audit_tab();
    auto* environments = tab->findChild<QComboBox*>("environment");
    QVERIFY(environments != nullptr);
    QVERIFY(environments->findText("tiny") >= 0);
    tab->set_environment("tiny");

    tab->check_backends({"subprocess"});
    tab->check_attempts({"fs-write-outside"});
    tab->audit();
    QVERIFY(!tab->running());
    QVERIFY2(tab->status_text().contains("subprocess is not available in environment tiny"),
             qPrintable(tab->status_text()));

    tab->check_backends({"namespace"});
    QSignalSpy audited(tab, &AuditTab::audited);
    tab->audit();
    QVERIFY2(tab->running(), qPrintable(tab->status_text()));
    QVERIFY2(tab->status_text().contains("namespace in environment tiny"),
             qPrintable(tab->status_text()));
    QVERIFY(audited.wait(240000));
    tab->select_row(tab->model()->row_of("fs-write-outside"));
    QVERIFY2(verdict_of("fs-write-outside", "namespace") == "BLOCKED",
             qPrintable(tab->evidence_text()));
    // The control ran (on the host's subprocess) and wrote where the attempt could not.
    QVERIFY2(tab->evidence_text().contains("control:"), qPrintable(tab->evidence_text()));
    QVERIFY2(!tab->evidence_text().contains("no control"), qPrintable(tab->evidence_text()));
    tab->set_environment("host");
  }

  void auditNeverActsOnTheHostThroughSubprocess() {
    // The host-acting attempts are ticked, but the core runner skips them on a backend
    // that does not claim to stop them; the harmless one escapes, as nothing stops it.
    audit_through_tab("subprocess", {"net-loopback-tcp", "fs-delete-host-file", "res-fork-bomb"});
    QCOMPARE(verdict_of("fs-delete-host-file", "subprocess"), QString("SKIPPED"));
    QCOMPARE(verdict_of("res-fork-bomb", "subprocess"), QString("SKIPPED"));
    QCOMPARE(verdict_of("net-loopback-tcp", "subprocess"), QString("ESCAPED"));
    // A partial audit says why it stored nothing.
    const QString status = window_->audit_tab()->status_text();
    QVERIFY2(status.contains("no report stored") && status.contains("Tick all"),
             qPrintable(status));
  }

  // Attempts that act on the host are never ticked by default; Tick all / none.
  void auditTicksHarmlessAttemptsByDefault() {
    QListWidget* list = window_->audit_tab()->attempt_list();
    QVERIFY(list->count() > 2);
    int host_acting = 0;
    for (int i = 0; i < list->count(); ++i) {
      const bool acts = list->item(i)->text().contains("(acts on the host)");
      host_acting += acts ? 1 : 0;
      QCOMPARE(list->item(i)->checkState(), acts ? Qt::Unchecked : Qt::Checked);
    }
    QVERIFY(host_acting > 0);
    auto* none = window_->audit_tab()->findChild<QPushButton*>("tickNone");
    auto* all = window_->audit_tab()->findChild<QPushButton*>("tickAll");
    QVERIFY(none && all);
    none->click();
    for (int i = 0; i < list->count(); ++i) QCOMPARE(list->item(i)->checkState(), Qt::Unchecked);
    all->click();
    for (int i = 0; i < list->count(); ++i) QCOMPARE(list->item(i)->checkState(), Qt::Checked);
  }

  void storedReportsListedAndProveTheDescription() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    // A report stored by `cordon audit` (written here by the same core code, every
    // attempt BLOCKED) is listed, and the tool description states what it proves.
    Result<audit::Catalogue> catalogue = audit::builtin_catalogue();
    QVERIFY(catalogue.has_value());
    const Backend& backend = *backends_->backend("namespace");
    audit::AuditReport report{.binding = audit::binding_for(backend, *catalogue),
                              .host_summary = audit::host_summary(),
                              .created_at = "2026-11-29T10:00:00Z",
                              .complete = true,
                              .verdicts = {}};
    for (const audit::Attempt& attempt : catalogue->attempts) {
      report.verdicts.push_back({.id = attempt.id,
                                 .threat_class = attempt.threat_class,
                                 .aspect = attempt.aspect,
                                 .claimed = Enforcement::kEnforced,
                                 .status = audit::AttemptStatus::kBlocked,
                                 .evidence = "fixture",
                                 .control = "",
                                 .duration_ms = 1});
    }
    QVERIFY(audit::store_report(report).has_value());
    const auto remove =
        qScopeGuard([&] { std::filesystem::remove(audit::report_path(report.binding)); });

    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    window_->tabs()->setCurrentIndex(MainWindow::kAudit);  // re-reads the stored reports
    QTreeWidget* list = window_->audit_tab()->reports();
    QCOMPARE(list->topLevelItemCount(), 1);
    QCOMPARE(list->topLevelItem(0)->text(0), QString("namespace"));
    QCOMPARE(list->topLevelItem(0)->text(1),
             QString::fromStdString(report.binding.backend_version));
    QCOMPARE(list->topLevelItem(0)->text(4), QString("2026-11-29T10:00:00Z"));
    QVERIFY(QString::fromStdString(report.binding.policy_hash)
                .startsWith(list->topLevelItem(0)->text(3)));
    list->setCurrentItem(list->topLevelItem(0));  // shown in the matrix
    QCOMPARE(window_->audit_tab()->model()->rowCount(), int(catalogue->attempts.size()));
    // The progress bar tells of the matrix shown, not of an earlier audit.
    QCOMPARE(window_->audit_tab()->progress()->maximum(), int(catalogue->attempts.size()));
    QCOMPARE(window_->audit_tab()->progress()->value(), int(catalogue->attempts.size()));

    run_tab()->set_backend("namespace");
    window_->tabs()->setCurrentIndex(MainWindow::kTool);
    ToolTab* tool = window_->tool_tab();
    tool->unverified_box()->setChecked(false);
    tool->format_box()->setCurrentText("text");
    QVERIFY2(tool->proof_text().contains("2026-11-29T10:00:00Z"), qPrintable(tool->proof_text()));
    QVERIFY2(tool->text().contains("The code runs in an isolated sandbox."),
             qPrintable(tool->text()));
    QVERIFY(!tool->text().contains("[unverified]"));
  }

  void corruptHistoryNeverStopsARun() {
    const QString bad = dir_.filePath("corrupt.sqlite3");
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'c'));
    file.close();
    qputenv("CORDON_HISTORY_PATH", bad.toUtf8());
    window_ = std::make_unique<MainWindow>(backends_);
    window_->show();
    QVERIFY(!window_->history_tab()->model()->is_open());
    run_snippet("echo despite", "subprocess");
    QTRY_COMPARE_WITH_TIMEOUT(window_->result_view()->badge_text(), QString("OK"), kRunWaitMs);
    QCOMPARE(window_->result_view()->stdout_text(), QString("despite\n"));
    qputenv("CORDON_HISTORY_PATH", history_.toUtf8());
    file.open(QIODevice::ReadOnly);
    QCOMPARE(file.readAll(), QByteArray(4096, 'c'));
  }

  // The Run tab keeps a session when asked (issue #41): the label names it and counts its
  // calls, Reset and Close act on it, and unticking closes it.
  void theRunTabKeepsASessionWhenAsked() {
    window_ = std::make_unique<MainWindow>(test::fixture_backends());
    RunTab* tab = run_tab();
    tab->set_backend("fixture");
    QVERIFY(!tab->reset_session_button()->isEnabled());
    QVERIFY(tab->session_label()->text().isEmpty());
    tab->keep_session_box()->setChecked(true);
    QCOMPARE(tab->session_label()->text(), QString("the next run opens a session"));
    tab->set_code("x", Language::kSh);
    QSignalSpy finished(tab, &RunTab::run_finished);
    for (int call = 1; call <= 2; ++call) {
      QTest::mouseClick(tab->run_button(), Qt::LeftButton);
      QVERIFY(finished.count() == call || finished.wait(kRunWaitMs));
    }
    QVERIFY2(tab->session_label()->text().contains("2 call(s)"),
             qPrintable(tab->session_label()->text()));
    QVERIFY(tab->reset_session_button()->isEnabled());
    QVERIFY(tab->session_files()->isVisibleTo(tab));
    // The panel's figures come from the session itself (the fixture's stats carry values),
    // and are read again on a timer while it is open.
    QLabel* stats = tab->session_stats_label();
    QVERIFY(stats->isVisibleTo(tab));
    for (const char* figure : {"memory 1.2 MiB", "CPU 56 ms", "workspace 256 MiB", "open ", "idle ",
                               "python interpreter alive"}) {
      QVERIFY2(stats->text().contains(figure), qPrintable(stats->text()));
    }
    QVERIFY(tab->session_refresh_timer()->isActive());
    stats->setText("stale");
    QSignalSpy refreshed(tab->session_refresh_timer(), &QTimer::timeout);
    QVERIFY(refreshed.wait(10000));
    QVERIFY2(stats->text().contains("memory 1.2 MiB"), qPrintable(stats->text()));
    // A call whose interpreter was lost: the Result says so, in the words every front end
    // uses, with the call's value.
    tab->set_code("lose", Language::kSh);
    QTest::mouseClick(tab->run_button(), Qt::LeftButton);
    QVERIFY(finished.count() == 3 || finished.wait(kRunWaitMs));
    const QString summary = window_->result_view()->summary_text();
    QVERIFY2(summary.contains("value 'lose'"), qPrintable(summary));
    QVERIFY2(summary.contains(QString::fromStdString(std::string(kStateLostWords))),
             qPrintable(summary));
    // With the session open the tab still fits 1024x640.
    window_->show();
    window_->resize(1024, 640);
    window_->tabs()->setCurrentIndex(MainWindow::kRun);
    QTRY_COMPARE(window_->size(), QSize(1024, 640));
    for (QPushButton* button : {tab->reset_session_button(), tab->close_session_button()}) {
      QVERIFY(button->isVisible());
      QVERIFY(button->width() >= button->sizeHint().width());
    }
    QTest::mouseClick(tab->close_session_button(), Qt::LeftButton);
    QCOMPARE(tab->session_label()->text(), QString("the next run opens a session"));
    QVERIFY(!tab->close_session_button()->isVisibleTo(tab));
    QVERIFY(!stats->isVisibleTo(tab));
    QVERIFY(!tab->session_refresh_timer()->isActive());
    tab->keep_session_box()->setChecked(false);
    QVERIFY(tab->session_label()->text().isEmpty());
  }

  // A session belongs to the backend it was opened on: choosing another backend closes it
  // with a word, and the next run opens a one-shot run or a session there, never a call of
  // the old session (issue #41).
  void choosingAnotherBackendClosesTheSession() {
    window_ = std::make_unique<MainWindow>(test::fixture_backends());
    RunTab* tab = run_tab();
    tab->set_backend("fixture");
    tab->keep_session_box()->setChecked(true);
    tab->set_code("x", Language::kSh);
    QSignalSpy finished(tab, &RunTab::run_finished);
    QTest::mouseClick(tab->run_button(), Qt::LeftButton);
    QVERIFY(finished.count() == 1 || finished.wait(kRunWaitMs));
    QVERIFY(tab->close_session_button()->isVisibleTo(tab));
    tab->set_backend("subprocess");
    QVERIFY(!tab->close_session_button()->isVisibleTo(tab));
    QCOMPARE(tab->session_label()->text(), QString("the next run opens a session"));
    QVERIFY2(tab->state_label()->text() ==
                 QString("session on fixture (host) closed: subprocess (host) is chosen now"),
             qPrintable(tab->state_label()->text()));
    // Back on the fixture: a new session, its first call.
    tab->set_backend("fixture");
    QTest::mouseClick(tab->run_button(), Qt::LeftButton);
    QVERIFY(finished.count() == 2 || finished.wait(kRunWaitMs));
    QCOMPARE(finished.last().at(0).value<RunResult>().stdout_data, std::string("1 sh x"));
    tab->keep_session_box()->setChecked(false);
  }

  // The session panel against a real sandbox (issue #41): a python session on the
  // namespace backend, driven through the Run tab as a user does.
  void thePanelShowsARealSessionOnTheNamespaceBackend() {
    if (backends_->backend("namespace") == nullptr) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here (user namespaces or cgroups refused)");
    }
    RunTab* tab = run_tab();
    tab->set_backend("namespace");
    tab->keep_session_box()->setChecked(true);
    tab->timeout_box()->setValue(20);
    QSignalSpy finished(tab, &RunTab::run_finished);
    QLabel* stats = tab->session_stats_label();
    // The panel's memory figure in bytes, -1 when it shows none.
    const auto memory_shown = [stats] {
      const QRegularExpressionMatch m =
          QRegularExpression(R"(memory ([0-9.]+) (B|KiB|MiB|GiB))").match(stats->text());
      if (!m.hasMatch()) return -1.0;
      const QStringList units{"B", "KiB", "MiB", "GiB"};
      return m.captured(1).toDouble() * std::pow(1024.0, units.indexOf(m.captured(2)));
    };

    QVERIFY(call_in_tab(finished, "x = 41\nopen('kept.txt', 'w').write('kept')\nx + 1"));
    RunResult result = finished.last().at(0).value<RunResult>();
    QCOMPARE(result.outcome, Outcome::kOk);
    QVERIFY(result.session.has_value());
    const std::string id = result.session->id;
    QString summary = window_->result_view()->summary_text();
    QVERIFY2(summary.contains("value 42"), qPrintable(summary));
    // Memory and age appear once the first call has opened the session.
    QVERIFY(stats->isVisibleTo(tab));
    const double before = memory_shown();
    QVERIFY2(before > 0, qPrintable(stats->text()));
    QVERIFY2(stats->text().contains("open ") && stats->text().contains("idle "),
             qPrintable(stats->text()));
    QVERIFY2(stats->text().contains("python interpreter alive"), qPrintable(stats->text()));
    QVERIFY(tab->session_files()->findItems("kept.txt", Qt::MatchStartsWith).size() == 1);
    // Idle time grows on the timer, with no call.
    const QString idle_then = stats->text();
    QSignalSpy refreshed(tab->session_refresh_timer(), &QTimer::timeout);
    QTRY_VERIFY_WITH_TIMEOUT(stats->text() != idle_then, 10000);
    QVERIFY(refreshed.count() >= 1);

    // The session keeps 64 MiB (every page written): the panel's memory follows.
    QVERIFY(call_in_tab(finished, "held = b'x' * (64 << 20)\nlen(held)"));
    QCOMPARE(finished.last().at(0).value<RunResult>().outcome, Outcome::kOk);
    const double after = memory_shown();
    QVERIFY2(after >= before + 48.0 * 1024 * 1024,
             qPrintable(QString("%1 then %2").arg(before).arg(after)));

    // Reset: a fresh interpreter (the variable is gone), the files kept.
    QTest::mouseClick(tab->reset_session_button(), Qt::LeftButton);
    QCOMPARE(tab->state_label()->text(), QString("session reset: a fresh interpreter, files kept"));
    // The panel is read again at once: the interpreter and the memory it held are gone.
    QVERIFY2(stats->text().contains("no interpreter kept"), qPrintable(stats->text()));
    QVERIFY2(memory_shown() < after - 48.0 * 1024 * 1024, qPrintable(stats->text()));
    QVERIFY(call_in_tab(finished, "('x' in globals(), open('kept.txt').read())"));
    result = finished.last().at(0).value<RunResult>();
    QCOMPARE(result.value, std::optional<std::string>("(False, 'kept')"));
    QCOMPARE(result.session->call, std::int64_t{3});

    // A call that times out loses the interpreter: the Result says so in the shared words.
    tab->timeout_box()->setValue(1);
    QVERIFY(call_in_tab(finished, "import time\ntime.sleep(60)"));
    result = finished.last().at(0).value<RunResult>();
    QCOMPARE(result.outcome, Outcome::kTimedOut);
    QVERIFY(result.state_lost);
    summary = window_->result_view()->summary_text();
    QVERIFY2(summary.contains(QString::fromStdString(std::string(kStateLostWords))),
             qPrintable(summary));

    // History: the session's calls in order, each saying its index.
    HistoryModel* history = window_->history_tab()->model();
    window_->history_tab()->refresh();
    history->set_session_filter(QString::fromStdString(id));
    QCOMPARE(history->rowCount(), 4);
    QCOMPARE(history->index(1, HistoryModel::kSource).data().toString(),
             QString("inspector · call 2"));
    QCOMPARE(history->index(1, HistoryModel::kSource).data(Qt::ToolTipRole).toString(),
             QString("call 2 of session %1").arg(QString::fromStdString(id)));
    history->set_session_filter({});

    // Close: the panel empties.
    QTest::mouseClick(tab->close_session_button(), Qt::LeftButton);
    QVERIFY(!stats->isVisibleTo(tab));
    QVERIFY(stats->text().isEmpty());
    QCOMPARE(tab->session_files()->count(), 0);
    QVERIFY(!tab->session_refresh_timer()->isActive());

    // Another backend chosen: the session opened since is closed, with a word.
    tab->timeout_box()->setValue(20);
    QVERIFY(call_in_tab(finished, "1"));
    QVERIFY(stats->isVisibleTo(tab));
    tab->set_backend("subprocess");
    QVERIFY(!stats->isVisibleTo(tab));
    QCOMPARE(tab->state_label()->text(),
             QString("session on namespace (host) closed: subprocess (host) is chosen now"));
    tab->keep_session_box()->setChecked(false);
  }

  // The History tab shows one session's calls in order (issue #41).
  void theHistoryShowsASessionsCallsInOrder() {
    const std::string id = "5e55" + std::string(28, 'a');
    {
      auto store = history::HistoryStore::open(history_.toStdString());
      QVERIFY(store);
      for (std::int64_t call : {2, 1}) {
        RunRequest request;
        request.code = "echo session-call-" + std::to_string(call);
        RunResult result;
        result.outcome = Outcome::kOk;
        result.backend = {"namespace", "1"};
        result.session = SessionCallRef{.id = id, .call = call};
        QVERIFY(store->add(history::make_record(request, result, std::chrono::system_clock::now(),
                                                std::chrono::system_clock::now(), "cli")));
      }
    }
    HistoryTab* tab = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    tab->refresh();
    QTest::keyClicks(tab->search_box(), "session-call-");
    QCOMPARE(tab->model()->rowCount(), 2);
    tab->select_row(0);
    QVERIFY(tab->session_button()->isEnabled());
    tab->search_box()->clear();
    QTest::mouseClick(tab->session_button(), Qt::LeftButton);
    QCOMPARE(tab->model()->rowCount(), 2);
    QCOMPARE(tab->model()->session_filter(), QString::fromStdString(id));
    QVERIFY(tab->model()->record_at(0)->code == "echo session-call-1");  // call order
    QVERIFY(tab->model()->record_at(1)->code == "echo session-call-2");
    QTest::mouseClick(tab->session_button(), Qt::LeftButton);
    QVERIFY(tab->model()->session_filter().isEmpty());
  }

  void unavailableBackendsAreDisabledWithTheReason() {
    window_ = std::make_unique<MainWindow>(test::fixture_backends());
    const QComboBox* combo = run_tab()->backend_box();
    const int broken = combo->findData("badmajor", Qt::UserRole);
    QVERIFY2(broken >= 0, "the fixture plugin with a wrong ABI is listed");
    const auto* model = qobject_cast<const QStandardItemModel*>(combo->model());
    QVERIFY(model != nullptr);
    QVERIFY(!model->item(broken)->isEnabled());
    QVERIFY2(model->item(broken)->toolTip().contains("ABI"),
             qPrintable(model->item(broken)->toolTip()));
    QVERIFY(model->item(combo->currentIndex())->isEnabled());  // never starts on a broken one
    const int working = combo->findData("subprocess", Qt::UserRole);
    QVERIFY(working >= 0);
    QVERIFY(model->item(working)->isEnabled());
  }

  void settingsRememberBackendAndLimits() {
    run_tab()->set_backend("subprocess");
    run_tab()->timeout_box()->setValue(42);
    window_->close();
    window_ = std::make_unique<MainWindow>(backends_);
    QCOMPARE(run_tab()->timeout_box()->value(), 42.0);
    QCOMPARE(run_tab()->backend(), QString("subprocess"));
  }
};

QTEST_MAIN(WidgetsTest)
#include "widgets_test.moc"
