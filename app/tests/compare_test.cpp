// Issue #15's Compare: full output side by side with a line diff between two columns,
// outcome cells in the badge colours with a sandbox error's or a refusal's reason, rows for
// memory, processes, truncation and the isolation enforced per aspect, highlighting only of
// real differences (never timings), "not measured" rather than 0, and a double-click that
// opens a column's full Result. The model is checked with QAbstractItemModelTester; the tab
// runs escape-free snippets on the real backends (subprocess, namespace, container).
#include <unistd.h>

#include <QHeaderView>
#include <QListWidget>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "backend_list.h"
#include "compare_model.h"
#include "compare_tab.h"
#include "cordon/proc/run_tool.h"
#include "frontend/environment.h"
#include "frontend/history.h"
#include "main_window.h"
#include "outcome_badge.h"
#include "result_view.h"
#include "run_tab.h"
#include "shell_environment_support.h"
#include "test_env.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {

constexpr int kRunWaitMs = 60000;  // generous: two cores shared with other builds

RunResult ok_result(std::string out) {
  RunResult result;
  result.outcome = Outcome::kOk;
  result.exit_code = 0;
  result.stdout_data = std::move(out);
  return result;
}

int row_of(Aspect aspect) {
  for (int i = 0; i < static_cast<int>(std::size(kAllAspects)); ++i) {
    if (kAllAspects[i] == aspect) return CompareModel::kEnforcedFirst + i;
  }
  return -1;
}

QString cell(const CompareModel& model, int row, int column) {
  return model.index(row, column).data().toString();
}

// The labels the Compare tab's backend list shows, in its order.
QStringList shown_backends(const CompareTab& tab) {
  const auto* list = tab.findChild<QListWidget*>();
  QStringList shown;
  for (int i = 0; i < list->count(); ++i) shown << list->item(i)->text();
  return shown;
}

}  // namespace

class CompareTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::shared_ptr<const BackendList> backends_;

  bool have(const char* name) const { return backends_->backend(name) != nullptr; }

  // Runs `request` on `names` in a Compare tab and waits for every column.
  void compare_in(CompareTab& tab, const QStringList& names) {
    tab.check_backends(names);
    QSignalSpy compared(&tab, &CompareTab::compared);
    tab.compare();
    QVERIFY(compared.count() == 1 || compared.wait(kRunWaitMs));
    QCOMPARE(tab.model()->columnCount(), names.size());
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    test::isolate(dir_);
    backends_ = std::make_shared<const BackendList>();
    QVERIFY2(have("subprocess"), "the subprocess plugin is built");
  }

  void modelShowsFullOutputAndHighlightsOnlyRealDifferences() {
    CompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_backends({"subprocess", "namespace"});
    RunResult a = ok_result("one\ntwo\nthree\n");
    a.setup_ms = 18;
    a.wall_ms = 20;
    a.cpu_ms = 44;
    a.enforced.push_back({Aspect::kTimeout, "deadline", "5 s"});
    RunResult b = ok_result("one\ntwo\nthree\n");
    b.setup_ms = 66;
    b.wall_ms = 300;
    b.cpu_ms = 2;
    b.enforced.push_back({Aspect::kTimeout, "deadline", "5 s"});
    b.enforced.push_back({Aspect::kNetwork, "network namespace", std::nullopt});
    model.set_result(0, a);
    model.set_result(1, b);
    // The whole output in the cell, not its first line and "…".
    QCOMPARE(cell(model, CompareModel::kStdout, 0), QString("one\ntwo\nthree"));
    QVERIFY(!model.differs(CompareModel::kStdout));
    // Timings far apart are still noise: never highlighted.
    for (const int row : {int(CompareModel::kSetup), int(CompareModel::kWall),
                          int(CompareModel::kCpu), int(CompareModel::kMemory)}) {
      QVERIFY2(!model.differs(row), qPrintable(QString::number(row)));
      QVERIFY(!model.index(row, 1).data(Qt::BackgroundRole).isValid());
    }
    // Isolation that differs is: the network row, not the timeout row.
    QCOMPARE(cell(model, row_of(Aspect::kNetwork), 0), QString("not enforced"));
    QCOMPARE(cell(model, row_of(Aspect::kNetwork), 1), QString("network namespace"));
    QVERIFY(model.differs(row_of(Aspect::kNetwork)));
    QCOMPARE(model.index(row_of(Aspect::kNetwork), 0).data(Qt::BackgroundRole).value<QColor>(),
             CompareModel::kDifferent);
    QCOMPARE(cell(model, row_of(Aspect::kTimeout), 1), QString("deadline 5 s"));
    QVERIFY(!model.differs(row_of(Aspect::kTimeout)));
    QCOMPARE(model.headerData(row_of(Aspect::kNetwork), Qt::Vertical, Qt::DisplayRole).toString(),
             QString("Enforced: network"));
    // Truncation is a real difference.
    QCOMPARE(cell(model, CompareModel::kTruncated, 0), QString("no"));
    b.stdout_truncated = true;
    model.set_result(1, b);
    QCOMPARE(cell(model, CompareModel::kTruncated, 1), QString("stdout"));
    QVERIFY(cell(model, CompareModel::kStdout, 1).endsWith("[truncated]"));
    QVERIFY(model.differs(CompareModel::kTruncated));
  }

  void modelOutcomeCellsCarryBadgeColourAndReasons() {
    CompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_backends({"subprocess", "namespace", "container"});
    Limits limits;
    limits.memory_bytes = 64ULL * 1024 * 1024;
    model.set_limits(limits);
    RunResult ok = ok_result("x\n");
    ok.memory_peak_kb = 752;
    model.set_result(0, ok);
    RunResult broken = sandbox_error({"namespace", {}}, "clone: Operation not permitted");
    model.set_result(1, broken);
    RunResult refused =
        sandbox_error({"container", {}}, "invalid request: the container backend cannot enforce");
    model.set_result(2, refused);

    QCOMPARE(cell(model, CompareModel::kOutcome, 0), QString("OK"));
    QCOMPARE(model.index(CompareModel::kOutcome, 0).data(Qt::BackgroundRole).value<QColor>(),
             outcome_badge(Outcome::kOk, std::nullopt, 0, 0).color);
    QCOMPARE(cell(model, CompareModel::kOutcome, 1),
             QString("SANDBOX ERROR: clone: Operation not permitted"));
    QCOMPARE(model.index(CompareModel::kOutcome, 1).data(Qt::BackgroundRole).value<QColor>(),
             outcome_badge(Outcome::kSandboxError, std::nullopt, -1, 0).color);
    // A refusal is not the sandbox failing: its own words and colour.
    QCOMPARE(cell(model, CompareModel::kOutcome, 2),
             QString("REFUSED: the container backend cannot enforce"));
    QCOMPARE(model.index(CompareModel::kOutcome, 2).data(Qt::BackgroundRole).value<QColor>(),
             CompareModel::kRefused);
    QVERIFY(model.differs(CompareModel::kOutcome));

    // What was not measured says so, never 0; memory is of the limit.
    QCOMPARE(cell(model, CompareModel::kMemory, 0), QString("752 KiB of 64.0 MiB"));
    QCOMPARE(cell(model, CompareModel::kMemory, 1), QString("not measured"));
    QCOMPARE(cell(model, CompareModel::kCpu, 1), QString("not measured"));
    QCOMPARE(cell(model, CompareModel::kLargestProcess, 1), QString("not measured"));
    QCOMPARE(cell(model, CompareModel::kExitCode, 1), QString("none"));
    QCOMPARE(cell(model, CompareModel::kProcesses, 0), QString("no limit"));
  }

  void modelShowsMedianAndSpreadOfRepeats() {
    CompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_backends({"subprocess", "namespace"}, 3);
    QCOMPARE(model.repeats(), 3);
    for (const std::int64_t wall : {30, 10, 20}) {
      RunResult run = ok_result("same\n");
      run.wall_ms = wall;
      run.cpu_ms = wall == 10 ? std::nullopt : std::optional<std::int64_t>(wall / 10);
      QVERIFY(model.wants_more(0));
      model.add_result(0, run);
    }
    QVERIFY(!model.wants_more(0));
    QVERIFY(!model.complete());  // the second column has not run
    QCOMPARE(cell(model, CompareModel::kWall, 0), QString("median 20 ms (10–30)"));
    QCOMPARE(cell(model, CompareModel::kCpu, 0), QString("median 2 ms (2–3), 1 not measured"));
    // Outcome and output are the first run's; a repeat that ended otherwise is flagged.
    model.add_result(1, ok_result("same\n"));
    RunResult late;
    late.outcome = Outcome::kTimedOut;
    late.timed_out = true;
    model.add_result(1, late);
    QCOMPARE(cell(model, CompareModel::kStdout, 1), QString("same"));
    const QString outcome = cell(model, CompareModel::kOutcome, 1);
    QVERIFY2(outcome.startsWith("OK\nrepeats disagree: "), qPrintable(outcome));
    QVERIFY2(outcome.contains("1 × TIMED OUT"), qPrintable(outcome));
    model.add_result(1, ok_result("same\n"));
    QVERIFY(model.complete());
    // A sandbox error ends its column at once: nothing to time.
    model.set_backends({"subprocess", "namespace"}, 5);
    model.add_result(0, sandbox_error({"subprocess", {}}, "broken"));
    QVERIFY(!model.wants_more(0));
    QCOMPARE(model.runs(0), 1);
  }

  void compareRepeatsEachBackend() {
    RunRequest request;
    request.code = "echo repeated";
    request.timeout = std::chrono::seconds(10);
    CompareTab tab(backends_, [&] { return request; });
    QCOMPARE(tab.repeats_box()->value(), 5);  // the default
    tab.repeats_box()->setValue(3);
    QStringList names{"subprocess"};
    if (have("namespace")) names << "namespace";
    if (names.size() < 2) QSKIP("one backend only");
    compare_in(tab, names);
    QVERIFY(!tab.running());
    for (int column = 0; column < names.size(); ++column) {
      QCOMPARE(tab.model()->runs(column), 3);
      const QString wall = cell(*tab.model(), CompareModel::kWall, column);
      QVERIFY2(wall.startsWith("median "), qPrintable(wall));
      QCOMPARE(cell(*tab.model(), CompareModel::kOutcome, column), QString("OK"));
    }
  }

  // The unisolated backend says so in the list and its column; History keeps one run per
  // backend of a Compare, not every repeat.
  void compareLabelsTheUnisolatedAndRecordsFirstRunsOnly() {
    if (!have("namespace")) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    RunRequest request;
    request.code = "echo labelled";
    request.timeout = std::chrono::seconds(10);
    CompareTab tab(backends_, [&] { return request; });
    const auto history = std::filesystem::path(dir_.filePath("compare.sqlite3").toStdString());
    tab.set_history_path(history);
    tab.repeats_box()->setValue(3);
    const QStringList shown = shown_backends(tab);
    QVERIFY2(shown.contains("subprocess (no isolation)"), qPrintable(shown.join(", ")));
    QVERIFY2(shown.contains("namespace"), qPrintable(shown.join(", ")));
    compare_in(tab, {"subprocess", "namespace"});
    const CompareModel& model = *tab.model();
    const int plain = static_cast<int>(model.backends().indexOf("subprocess"));
    const int isolated = static_cast<int>(model.backends().indexOf("namespace"));
    QVERIFY(plain >= 0 && isolated >= 0);
    QCOMPARE(model.headerData(plain, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("subprocess (no isolation)"));
    QCOMPARE(model.headerData(isolated, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("namespace"));
    QCOMPARE(model.runs(plain), 3);
    QCOMPARE(cell(model, CompareModel::kOutcome, plain), QString("OK"));
    auto store = history::HistoryStore::open(history);
    QVERIFY(store);
    const auto runs = store->list(history::Query{});
    QVERIFY(runs);
    QCOMPARE(runs->size(), std::size_t{2});
    QStringList recorded;
    for (const auto& run : *runs) recorded << QString::fromStdString(run.backend);
    recorded.sort();
    QCOMPARE(recorded, (QStringList{"namespace", "subprocess"}));
  }

  // All three backends, one failing: the code exits 3 unless it runs as uid 0, which the
  // namespace sandbox's 65534 is not.
  void compareThreeBackendsOneFails() {
    if (!have("namespace")) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    if (::geteuid() != 0) QSKIP("needs root: the subprocess run must be the host's uid 0");
    QStringList names{"subprocess", "namespace"};
    if (have("container")) names << "container";
    RunRequest request;
    request.code = "echo line-a; id -u; [ \"$(id -u)\" = 0 ] || exit 3";
    request.timeout = std::chrono::seconds(20);
    CompareTab tab(backends_, [&] { return request; });
    compare_in(tab, names);
    const CompareModel& model = *tab.model();
    const int plain = static_cast<int>(model.backends().indexOf("subprocess"));
    const int isolated = static_cast<int>(model.backends().indexOf("namespace"));
    QCOMPARE(cell(model, CompareModel::kOutcome, plain), QString("OK"));
    QCOMPARE(cell(model, CompareModel::kOutcome, isolated), QString("FAILED exit 3"));
    QCOMPARE(model.index(CompareModel::kOutcome, isolated).data(Qt::BackgroundRole).value<QColor>(),
             outcome_badge(Outcome::kFailed, std::nullopt, 3, 0).color);
    QVERIFY(model.differs(CompareModel::kOutcome));
    QVERIFY(model.differs(CompareModel::kExitCode));
    QVERIFY(model.differs(CompareModel::kStdout));
    // The filesystem is isolated in one column and not in the other, and it shows.
    QVERIFY(model.differs(row_of(Aspect::kFilesystem)));
    QCOMPARE(cell(model, row_of(Aspect::kFilesystem), plain), QString("not enforced"));
    // Full output: both lines.
    QCOMPARE(cell(model, CompareModel::kStdout, plain), QString("line-a\n0"));
    if (names.contains("container")) {
      const int boxed = static_cast<int>(model.backends().indexOf("container"));
      // Root inside its own user namespace or not: either way it ran, it did not fail to.
      const QString outcome = cell(model, CompareModel::kOutcome, boxed);
      QVERIFY2(outcome == "OK" || outcome == "FAILED exit 3", qPrintable(outcome));
    }
    // Timings are never highlighted, whatever they came to.
    QVERIFY(!model.differs(CompareModel::kSetup));
    QVERIFY(!model.differs(CompareModel::kWall));

    // The line diff of the two columns' stdout: the shared line kept, the uid changed.
    tab.choose_diff(plain, isolated);
    const QString diff = tab.diff_text();
    QVERIFY2(diff.contains("  line-a"), qPrintable(diff));
    QVERIFY2(diff.contains("- 0"), qPrintable(diff));
    QVERIFY2(diff.contains("+ 65534"), qPrintable(diff));
  }

  // gVisor (issue #18) is offered as a backend of its own, "container (runsc)", and compared
  // beside runc: the same code, the other kernel (gVisor's uname is its own), each column's
  // Result naming its variant and the History recording the label.
  void compareRuncAndGvisor() {
    // Found as the container backend finds it (the system PATH, proc::find_tool()).
    if (proc::find_tool("runsc").empty()) {
      if (test::require_kernel_features())
        QFAIL("runsc is not installed (install-deps installs it)");
      QSKIP("runsc is not installed here");
    }
    RunRequest request;
    request.code = "uname -r";
    request.timeout = std::chrono::seconds(30);
    CompareTab tab(backends_, [&] { return request; });
    const auto history = std::filesystem::path(dir_.filePath("gvisor.sqlite3").toStdString());
    tab.set_history_path(history);
    tab.repeats_box()->setValue(1);
    const QStringList shown = shown_backends(tab);
    QVERIFY2(shown.contains("container (runsc)"), qPrintable(shown.join(", ")));
    if (!have("container") || !have("container (runsc)")) {
      if (test::require_kernel_features()) QFAIL("container or container (runsc) unavailable");
      QSKIP("container or container (runsc) unavailable here");
    }
    compare_in(tab, {"container", "container (runsc)"});
    const CompareModel& model = *tab.model();
    const int runc = static_cast<int>(model.backends().indexOf("container"));
    const int gvisor = static_cast<int>(model.backends().indexOf("container (runsc)"));
    QCOMPARE(cell(model, CompareModel::kOutcome, runc), QString("OK"));
    QCOMPARE(cell(model, CompareModel::kOutcome, gvisor), QString("OK"));
    QVERIFY(model.differs(CompareModel::kStdout));  // the host's kernel release, and gVisor's
    QCOMPARE(model.result(gvisor)->backend.variant, std::string("runsc"));
    QCOMPARE(model.result(runc)->backend.variant, std::string());
    auto store = history::HistoryStore::open(history);
    QVERIFY(store);
    const auto runs = store->list(history::Query{});
    QVERIFY(runs);
    QStringList recorded;
    for (const auto& run : *runs) recorded << QString::fromStdString(run.backend);
    recorded.sort();
    QCOMPARE(recorded, (QStringList{"container", "container (runsc)"}));
  }

  // Compare across environments (issue #17): one backend, the host's /usr and a stored
  // environment holding only a shell, one column each, each Result recording its own.
  void compareOneBackendInTwoEnvironments() {
    if (!have("namespace")) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    if (!cordon::testing::have_shell_environment()) {
      QSKIP("the shell environment is made from an x86_64 Debian host's files");
    }
    namespace fs = std::filesystem;
    const fs::path base =
        fs::path("/var/tmp") / ("cordon-compare-environments-" + std::to_string(::getpid()));
    fs::remove_all(base);
    const fs::path tree = cordon::testing::make_shell_environment(base / "tree");
    const QByteArray before = qgetenv("CORDON_ENVIRONMENTS_DIR");
    qputenv("CORDON_ENVIRONMENTS_DIR", QByteArray::fromStdString((base / "store").string()));
    auto added = environment::Store(base / "store").add("tiny", tree, nullptr);
    QVERIFY2(added.has_value(), added ? "" : added.error().describe().c_str());

    RunRequest request;
    request.code = "n=0; for f in /usr/bin/*; do n=$((n+1)); done; echo $n";
    request.timeout = std::chrono::seconds(20);
    CompareTab tab(backends_, [&] { return request; });
    tab.check_backends({"namespace"});
    tab.check_environments({"host", "tiny"});
    QSignalSpy compared(&tab, &CompareTab::compared);
    tab.compare();
    QVERIFY(compared.count() == 1 || compared.wait(kRunWaitMs));
    const CompareModel& model = *tab.model();
    QCOMPARE(model.columnCount(), 2);
    QCOMPARE(model.headerData(0, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("namespace · host"));
    QCOMPARE(model.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("namespace · tiny"));
    QCOMPARE(cell(model, CompareModel::kStdout, 1), QString("2"));  // dash and sh
    QVERIFY(cell(model, CompareModel::kStdout, 0).toInt() > 100);   // the host's /usr/bin
    QVERIFY(model.differs(CompareModel::kStdout));
    QCOMPARE(model.result(0)->environment->name, std::string("host"));
    QCOMPARE(model.result(1)->environment->name, std::string("tiny"));
    QCOMPARE(model.result(1)->environment->digest, added->digest);
    qputenv("CORDON_ENVIRONMENTS_DIR", before);
    fs::remove_all(base);
  }

  // The store is read again when a tab is shown or the window activated (issue #17): an
  // environment added after the inspector started is offered, and one removed and added
  // again with other contents gets a new backend list (the old one's tree is gone).
  void environmentsAreReadAgainFromTheStore() {
    namespace fs = std::filesystem;
    const fs::path base =
        fs::path("/var/tmp") / ("cordon-compare-store-" + std::to_string(::getpid()));
    fs::remove_all(base);
    const auto tree = [&](const std::string& name) {
      fs::create_directories(base / name / "usr/bin");
      std::ofstream(base / name / "usr/bin/marker") << name;
      return base / name;
    };
    const QByteArray before = qgetenv("CORDON_ENVIRONMENTS_DIR");
    qputenv("CORDON_ENVIRONMENTS_DIR", QByteArray::fromStdString((base / "store").string()));
    environment::Store store(base / "store");
    QVERIFY(store.add("one", tree("a"), nullptr).has_value());

    EnvironmentLists lists(backends_);
    CompareTab tab(backends_, [] { return RunRequest{}; });
    tab.check_environments({"host", "one"});
    QCOMPARE(lists.names(), QStringList({"host", "one"}));
    const Result<BackendListPtr> first = lists.in("one");
    QVERIFY(first.has_value());
    QCOMPARE(lists.in("one")->get(), first->get());  // made once
    QVERIFY(!lists.refresh());                       // nothing changed
    QCOMPARE(lists.in("one")->get(), first->get());

    QVERIFY(store.remove("one").has_value());
    QVERIFY(store.add("one", tree("b"), nullptr).has_value());
    QVERIFY(store.add("two", tree("c"), nullptr).has_value());
    QVERIFY(lists.refresh());
    QCOMPARE(lists.names(), QStringList({"host", "one", "two"}));
    const Result<BackendListPtr> second = lists.in("one");
    QVERIFY(second.has_value());
    QVERIFY((*second)->environment().digest != (*first)->environment().digest);
    QCOMPARE((*second)->environment().digest, store.find("one")->digest);

    // The Compare tab's checklist follows, its ticks kept.
    tab.refresh_environments();
    auto* listed = tab.findChild<QListWidget*>(QStringLiteral("environments"));
    QVERIFY(listed != nullptr);
    QCOMPARE(listed->count(), 3);
    QCOMPARE(listed->item(2)->text(), QString("two"));
    QCOMPARE(listed->item(0)->checkState(), Qt::Checked);
    QCOMPARE(listed->item(1)->checkState(), Qt::Checked);
    QCOMPARE(listed->item(2)->checkState(), Qt::Unchecked);
    qputenv("CORDON_ENVIRONMENTS_DIR", before);
    fs::remove_all(base);
  }

  void refusedRequestShowsTheRefusal() {
    RunRequest request;
    request.code = "echo never";
    request.timeout = std::chrono::seconds(10);
    request.limits.memory_bytes = 1;  // below what any backend can honour
    CompareTab tab(backends_, [&] { return request; });
    QStringList names{"subprocess"};
    if (have("namespace")) names << "namespace";
    if (names.size() < 2) QSKIP("one backend only");
    compare_in(tab, names);
    for (int column = 0; column < names.size(); ++column) {
      const QString text = cell(*tab.model(), CompareModel::kOutcome, column);
      QVERIFY2(text.startsWith("REFUSED: "), qPrintable(text));
      QVERIFY2(text.size() > QString("REFUSED: ").size(), qPrintable(text));
    }
  }

  void doubleClickOpensTheColumnsResult() {
    MainWindow window(backends_);
    window.resize(1000, 700);
    window.show();
    CompareTab* tab = window.compare_tab();
    window.tabs()->setCurrentWidget(tab);
    QStringList names{"subprocess"};
    if (have("namespace")) names << "namespace";
    if (names.size() < 2) QSKIP("one backend only");
    window.run_tab()->set_code("echo compared; exit 4", Language::kSh);
    compare_in(*tab, names);
    auto* table = tab->findChild<QTableView*>();
    QVERIFY(table != nullptr);
    const QModelIndex index = tab->model()->index(CompareModel::kOutcome, 1);
    table->scrollTo(index);
    const QPoint at = table->visualRect(index).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::kResult));
    QCOMPARE(window.result_view()->badge_text(), QString("FAILED exit 4"));
    QCOMPARE(window.result_view()->stdout_text(), QString("compared\n"));
  }
};

QTEST_MAIN(CompareTest)
#include "compare_test.moc"
