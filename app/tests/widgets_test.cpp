// The inspector's real widgets on the offscreen platform: a snippet runs and its Result
// shows; a long run is cancelled; a timeout shows TIMED OUT; a run made by the CLI shows in
// History and can be re-run; two backends are compared; a corrupt history never stops a
// run. Snippets are escape-free: subprocess for plain runs, namespace where isolation shows.
#include <unistd.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "code_editor.h"
#include "compare_model.h"
#include "compare_tab.h"
#include "history_model.h"
#include "history_tab.h"
#include "main_window.h"
#include "plan_tab.h"
#include "result_view.h"
#include "run_tab.h"
#include "test_env.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {
constexpr int kRunWaitMs = 30000;  // generous: two cores shared with other builds
}

class WidgetsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString history_;
  std::shared_ptr<const BackendList> backends_;
  std::unique_ptr<MainWindow> window_;

  RunTab* run_tab() const { return window_->run_tab(); }

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
  }

  void historyShowsARunOfTheCli() {
    QProcess cli;
    cli.setProcessEnvironment(QProcessEnvironment::systemEnvironment());  // our history path
    cli.start(CORDON_CLI_BINARY, {"run", "-b", "subprocess", "-c", "echo from-the-cli; exit 4"});
    QVERIFY(cli.waitForFinished(kRunWaitMs));
    QCOMPARE(cli.exitCode(), 4);
    QVERIFY2(!cli.readAllStandardError().contains("not recorded"), "the CLI recorded the run");

    HistoryTab* tab = window_->history_tab();
    window_->tabs()->setCurrentIndex(MainWindow::kHistory);
    tab->refresh();
    QTest::keyClicks(tab->search_box(), "from-the-cli");
    QCOMPARE(tab->model()->rowCount(), 1);
    QCOMPARE(tab->model()->index(0, HistoryModel::kSource).data().toString(), QString("cli"));
    QCOMPARE(tab->model()->index(0, HistoryModel::kOutcome).data().toString(),
             QString("FAILED exit 4"));
    tab->select_row(0);
    QCOMPARE(tab->result_view()->badge_text(), QString("FAILED exit 4"));
    tab->refresh();  // e.g. the tab shown again: the selection and its Result stay
    QCOMPARE(tab->result_view()->badge_text(), QString("FAILED exit 4"));
    QCOMPARE(tab->result_view()->stdout_text(), QString("from-the-cli\n"));

    tab->rerun_selected();
    QCOMPARE(window_->tabs()->currentIndex(), int(MainWindow::kRun));
    QCOMPARE(run_tab()->editor()->toPlainText(), QString("echo from-the-cli; exit 4"));
    QCOMPARE(run_tab()->backend(), QString("subprocess"));

    tab->select_row(0);
    tab->delete_selected();
    QCOMPARE(tab->model()->rowCount(), 0);
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

  void unavailableBackendsAreDisabledWithTheReason() {
    qputenv("CORDON_PLUGIN_PATH", CORDON_TEST_FIXTURE_PLUGIN_DIR);
    auto with_fixtures = std::make_shared<const BackendList>();
    qunsetenv("CORDON_PLUGIN_PATH");
    window_ = std::make_unique<MainWindow>(with_fixtures);
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
