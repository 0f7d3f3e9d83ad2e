// The inspector's models: HistoryModel over a real store and CompareModel, each checked
// by QAbstractItemModelTester while sorted, searched, refilled and edited; the outcome
// badge tells every outcome apart.
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include "audit_model.h"
#include "compare_model.h"
#include "cordon/result_json.h"
#include "display_text.h"
#include "frontend/history.h"
#include "history_model.h"
#include "line_diff.h"
#include "outcome_badge.h"
#include "output_cap.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {

history::RunRecord record(const std::string& code, const std::string& backend, Outcome outcome,
                          std::int64_t wall_ms, std::int64_t started_ms) {
  RunRequest request;
  request.code = code;
  RunResult result;
  result.outcome = outcome;
  result.exit_code = outcome == Outcome::kFailed ? 2 : 0;
  result.wall_ms = wall_ms;
  result.backend = {backend, "1"};
  const auto started = std::chrono::system_clock::time_point(std::chrono::milliseconds(started_ms));
  return history::make_record(request, result, started, started, "test");
}

RunResult result_of(Outcome outcome, int exit_code, std::string out, std::int64_t wall_ms) {
  RunResult result;
  result.outcome = outcome;
  result.exit_code = exit_code;
  result.stdout_data = std::move(out);
  result.wall_ms = wall_ms;
  return result;
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private slots:
  // The live view's cap keeps exactly the bytes the Result keeps, per stream, and says
  // once where it cut.
  void outputCapKeepsTheFirstBytesOfEachStream() {
    OutputCap cap(10);
    OutputCap::Take take = cap.take(0, "12345");
    QCOMPARE(take.shown, QByteArray("12345"));
    QVERIFY(!take.cut_now);
    take = cap.take(0, "67890");  // exactly at the cap: not cut yet
    QCOMPARE(take.shown, QByteArray("67890"));
    QVERIFY(!take.cut_now && !cap.cut(0));
    take = cap.take(0, "abc");
    QCOMPARE(take.shown, QByteArray());
    QVERIFY(take.cut_now && cap.cut(0));
    take = cap.take(0, "def");  // after the cut: nothing, and no second marker
    QVERIFY(take.shown.isEmpty() && !take.cut_now);
    // stderr has a cap of its own; a chunk across the cap is split at it.
    take = cap.take(1, "0123456789xyz");
    QCOMPARE(take.shown, QByteArray("0123456789"));
    QVERIFY(take.cut_now && cap.cut(1));
  }

  void displayTextStripsAnsiEscapes() {
    QCOMPARE(display_text("\x1b[1;31mred\x1b[0m plain"), QString("red plain"));
    QCOMPARE(display_text("\x1b]0;title\x07"
                          "after"),
             QString("after"));
    QCOMPARE(display_text("\x1b[2K\x1b[Gline"), QString("line"));
    QCOMPARE(display_text("no escapes\n"), QString("no escapes\n"));
    QCOMPARE(display_text("caf\xc3\xa9"), QString::fromUtf8("café"));
    QCOMPARE(line_count(""), 0);
    QCOMPARE(line_count("a"), 1);
    QCOMPARE(line_count("a\n"), 1);
    QCOMPARE(line_count("a\nb"), 2);
  }

  void historyModelSortsSearchesDeletes() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("h.sqlite3").toStdString());
    {
      auto store = history::HistoryStore::open(path);
      QVERIFY(store);
      QVERIFY(store->add(record("echo one", "subprocess", Outcome::kOk, 30, 1000)));
      QVERIFY(store->add(record("echo two", "namespace", Outcome::kFailed, 10, 2000)));
      QVERIFY(store->add(record("\necho three", "container", Outcome::kTimedOut, 20, 3000)));
    }
    HistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model.open(path));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(HistoryModel::kColumnCount));
    auto codes = [&] {
      QStringList out;
      for (int row = 0; row < model.rowCount(); ++row) {
        out << model.index(row, HistoryModel::kCode).data().toString();
      }
      return out;
    };
    QCOMPARE(codes(), (QStringList{"echo three", "echo two", "echo one"}));  // newest first
    model.sort(HistoryModel::kDuration, Qt::AscendingOrder);
    QCOMPARE(codes(), (QStringList{"echo two", "echo three", "echo one"}));
    model.sort(HistoryModel::kBackend, Qt::AscendingOrder);
    QCOMPARE(codes(), (QStringList{"echo three", "echo two", "echo one"}));
    model.sort(HistoryModel::kOutcome, Qt::DescendingOrder);  // timed_out, ok, failed
    QCOMPARE(codes(), (QStringList{"echo three", "echo one", "echo two"}));
    QCOMPARE(model.index(0, HistoryModel::kOutcome).data().toString(), QString("TIMED OUT"));
    QCOMPARE(model.index(2, HistoryModel::kOutcome).data().toString(), QString("FAILED exit 2"));
    QCOMPARE(model.index(0, HistoryModel::kDuration).data().toString(), QString("20 ms"));
    auto backend_at = [&](int row) {
      return model.index(row, HistoryModel::kBackend).data().toString();
    };
    model.set_unisolated_backends({"subprocess"});
    QCOMPARE(backend_at(1), QString("subprocess (no isolation)"));
    QCOMPARE(backend_at(2), QString("namespace"));
    model.set_unisolated_backends({});
    QCOMPARE(backend_at(1), QString("subprocess"));

    model.set_search("TWO");
    QCOMPARE(codes(), QStringList{"echo two"});
    const auto one = model.record_at(0);
    QVERIFY(one.has_value());
    QCOMPARE(one->backend, std::string("namespace"));
    QVERIFY(model.remove_at(0));
    QCOMPARE(model.rowCount(), 0);
    model.set_search({});
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(model.error().isEmpty());
  }

  void historyModelShowsAndFiltersBySource() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("s.sqlite3").toStdString());
    {
      auto store = history::HistoryStore::open(path);
      QVERIFY(store);
      auto cli = record("echo cli", "namespace", Outcome::kOk, 5, 1000);
      cli.source = "cli";
      auto mcp = record("echo mcp", "namespace", Outcome::kOk, 5, 2000);
      mcp.source = "mcp";
      mcp.client = "claude-code 1.0";
      auto app = record("echo app", "subprocess", Outcome::kOk, 5, 3000);
      app.source = "inspector";
      QVERIFY(store->add(cli));
      QVERIFY(store->add(mcp));
      QVERIFY(store->add(app));
    }
    HistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model.sources().isEmpty());  // nothing open yet
    QVERIFY(model.open(path));
    QCOMPARE(model.sources(), (QStringList{"cli", "inspector", "mcp"}));
    auto column = [&](int col) {
      QStringList out;
      for (int row = 0; row < model.rowCount(); ++row)
        out << model.index(row, col).data().toString();
      return out;
    };
    QCOMPARE(column(HistoryModel::kSource),
             (QStringList{"inspector", "mcp (claude-code 1.0)", "cli"}));
    QCOMPARE(model.index(1, HistoryModel::kSource).data(Qt::ToolTipRole).toString(),
             QString("MCP client: claude-code 1.0"));
    QVERIFY(!model.index(0, HistoryModel::kSource).data(Qt::ToolTipRole).isValid());

    model.set_source_filter("mcp");
    QCOMPARE(model.source_filter(), QString("mcp"));
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo mcp"});
    model.set_search("echo");  // search and filter together
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo mcp"});
    model.set_source_filter("cli");
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo cli"});
    model.sort(HistoryModel::kSource, Qt::AscendingOrder);  // the filter survives a re-sort
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo cli"});
    model.set_source_filter({});
    QCOMPARE(model.rowCount(), 3);
    QVERIFY(model.error().isEmpty());
  }

  // The Environment column (issue #17), after Backend: a name as it is, an unregistered
  // --rootfs as "--rootfs" and the start of its digest (whole in the tooltip), nothing for
  // a run that recorded none; filtered by a name or a digest, as the store lists them.
  void historyModelShowsAndFiltersByEnvironment() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("e.sqlite3").toStdString());
    const std::string digest = "sha256:" + std::string(64, 'a');
    {
      auto store = history::HistoryStore::open(path);
      QVERIFY(store);
      auto sci = record("echo sci", "namespace", Outcome::kOk, 5, 1000);
      sci.environment = EnvironmentRef{.name = "sci", .digest = "sha256:5c1"};
      auto rootfs = record("echo rootfs", "namespace", Outcome::kOk, 5, 2000);
      rootfs.environment = EnvironmentRef{.name = "", .digest = digest};
      auto host = record("echo host", "subprocess", Outcome::kOk, 5, 3000);
      host.environment = EnvironmentRef{.name = "host", .digest = ""};
      auto none = record("echo none", "container", Outcome::kOk, 5, 4000);
      QVERIFY(store->add(sci));
      QVERIFY(store->add(rootfs));
      QVERIFY(store->add(host));
      QVERIFY(store->add(none));
    }
    HistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model.environments().isEmpty());  // nothing open yet
    QVERIFY(model.open(path));
    QCOMPARE(int(HistoryModel::kEnvironment), int(HistoryModel::kBackend) + 1);
    QCOMPARE(model.headerData(HistoryModel::kEnvironment, Qt::Horizontal, Qt::DisplayRole),
             QVariant(QString("Environment")));
    QCOMPARE(model.environments(), (QStringList{"host", "sci", QString::fromStdString(digest)}));
    auto column = [&](int col) {
      QStringList out;
      for (int row = 0; row < model.rowCount(); ++row)
        out << model.index(row, col).data().toString();
      return out;
    };
    QCOMPARE(column(HistoryModel::kEnvironment),
             (QStringList{"", "host", "--rootfs sha256:aaaaaaaaaaaa\u2026", "sci"}));
    auto tip = [&](int row) {
      return model.index(row, HistoryModel::kEnvironment).data(Qt::ToolTipRole);
    };
    QVERIFY(!tip(0).isValid());  // none
    QVERIFY(!tip(1).isValid());  // the host's has no digest
    QCOMPARE(tip(2).toString(), QString::fromStdString(digest));
    QCOMPARE(tip(3).toString(), QString("sha256:5c1"));
    // A digest no longer than the part shown is shown whole.
    QCOMPARE(HistoryModel::environment_text(EnvironmentRef{.name = "", .digest = "sha256:0ff"}),
             QString("--rootfs sha256:0ff"));
    QCOMPARE(HistoryModel::environment_filter_text(QString::fromStdString(digest)),
             QString("--rootfs sha256:aaaaaaaaaaaa\u2026"));
    QCOMPARE(HistoryModel::environment_filter_text("sci"), QString("sci"));

    model.set_environment_filter("sci");
    QCOMPARE(model.environment_filter(), QString("sci"));
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo sci"});
    model.set_environment_filter(QString::fromStdString(digest));
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo rootfs"});
    model.set_search("rootfs");  // search and filter together
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo rootfs"});
    model.set_search("sci");
    QCOMPARE(model.rowCount(), 0);
    model.set_search({});
    model.set_environment_filter({});
    model.set_search("SCI");  // the search finds the environment's name too
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo sci"});
    model.set_search({});
    model.sort(HistoryModel::kEnvironment, Qt::AscendingOrder);  // none, --rootfs, names
    QCOMPARE(column(HistoryModel::kCode),
             (QStringList{"echo none", "echo rootfs", "echo host", "echo sci"}));
    model.set_environment_filter("host");  // the filter survives a re-sort
    QCOMPARE(column(HistoryModel::kCode), QStringList{"echo host"});
    QVERIFY(model.error().isEmpty());
  }

  void historyModelReportsACorruptFile() {
    QTemporaryDir dir;
    QFile file(dir.filePath("bad.sqlite3"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'q'));
    file.close();
    HistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!model.open(file.fileName().toStdString()));
    QVERIFY2(model.error().contains("not a history database"), qPrintable(model.error()));
    QCOMPARE(model.rowCount(), 0);
  }

  void compareModelHighlightsDifferences() {
    CompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_backends({"subprocess", "namespace"});
    QCOMPARE(model.columnCount(), 2);
    QCOMPARE(model.rowCount(), int(CompareModel::kRowCount));
    QVERIFY(!model.complete());
    QCOMPARE(model.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QString("namespace"));
    model.set_result(0, result_of(Outcome::kOk, 0, "0\n", 10));
    QVERIFY(!model.differs(CompareModel::kStdout));  // one column: nothing to compare
    model.set_result(1, result_of(Outcome::kOk, 0, "65534\n", 12));
    QVERIFY(model.complete());
    QVERIFY(model.differs(CompareModel::kStdout));
    QVERIFY(!model.differs(CompareModel::kOutcome));
    QVERIFY(!model.differs(CompareModel::kWall));  // 10 vs 12 ms is noise
    QCOMPARE(model.index(CompareModel::kStdout, 1).data(Qt::BackgroundRole).value<QColor>(),
             CompareModel::kDifferent);
    // The outcome row wears the badge colour, not the highlight.
    QCOMPARE(model.index(CompareModel::kOutcome, 1).data(Qt::BackgroundRole).value<QColor>(),
             outcome_badge(Outcome::kOk, std::nullopt, 0, 0).color);
    model.set_result(1, result_of(Outcome::kFailed, 1, "0\n", 400));
    QVERIFY(model.differs(CompareModel::kOutcome));
    QVERIFY(model.differs(CompareModel::kExitCode));
    QVERIFY(!model.differs(CompareModel::kWall));  // timings are never highlighted
    QVERIFY(!model.differs(CompareModel::kStdout));
    QCOMPARE(model.index(CompareModel::kOutcome, 1).data().toString(), QString("FAILED exit 1"));

    // CPU time that was not measured reads so, never "0 ms", and differs from a measured one.
    QCOMPARE(model.index(CompareModel::kCpu, 1).data().toString(), QString("not measured"));
    QVERIFY(!model.differs(CompareModel::kCpu));  // neither measured
    RunResult measured = result_of(Outcome::kOk, 0, "0\n", 10);
    measured.cpu_ms = 3;
    model.set_result(0, measured);
    QCOMPARE(model.index(CompareModel::kCpu, 0).data().toString(), QString("3 ms"));
    QVERIFY(!model.differs(CompareModel::kCpu));  // timings are never highlighted
  }

  void auditModelFillsTheMatrix() {
    AuditModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.reset({"subprocess", "namespace"});
    QCOMPARE(model.columnCount(), AuditModel::kFirstBackend + 2);
    const audit::AttemptVerdict escaped{.id = "net-x",
                                        .threat_class = "network",
                                        .aspect = Aspect::kNetwork,
                                        .claimed = Enforcement::kEnforced,
                                        .status = audit::AttemptStatus::kEscaped,
                                        .evidence = "listener reached",
                                        .control = "",
                                        .duration_ms = 3};
    audit::AttemptVerdict blocked = escaped;
    blocked.status = audit::AttemptStatus::kBlocked;
    blocked.evidence = "no connection";
    model.add_verdict("namespace", blocked);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, AuditModel::kFirstBackend).data().toString(), QString("…"));
    model.add_verdict("subprocess", escaped);
    QCOMPARE(model.rowCount(), 1);  // same attempt, another column
    // An escape the backend claims to stop is marked.
    QCOMPARE(model.index(0, AuditModel::kFirstBackend).data().toString(), QString("ESCAPED!"));
    QCOMPARE(model.index(0, AuditModel::kFirstBackend + 1).data().toString(), QString("BLOCKED"));
    // ESCAPED reads red; other verdicts black on their light colour.
    QCOMPARE(
        model.index(0, AuditModel::kFirstBackend).data(Qt::ForegroundRole).value<QBrush>().color(),
        QColor(0xb7, 0x1c, 0x1c));
    QCOMPARE(model.index(0, AuditModel::kFirstBackend + 1)
                 .data(Qt::ForegroundRole)
                 .value<QBrush>()
                 .color(),
             QColor(Qt::black));
    QCOMPARE(model.index(0, AuditModel::kFirstBackend)
                 .data(Qt::BackgroundRole)
                 .value<QBrush>()
                 .color()
                 .red(),
             0xff);
    QCOMPARE(model.index(0, AuditModel::kAspect).data().toString(), QString("network"));
    QVERIFY(model.evidence(0).contains("namespace: BLOCKED (claims enforced) — no connection"));
    model.add_verdict("not-a-column", escaped);
    QCOMPARE(model.rowCount(), 1);
  }

  void lineDiffKeepsCommonLinesInOrder() {
    const QStringList old_lines{"a", "b", "c", "d"};
    const QStringList new_lines{"a", "c", "x", "d", "e"};
    const std::vector<DiffLine> diff = diff_lines(old_lines, new_lines);
    QCOMPARE(diff_text(diff), QString("  a\n- b\n  c\n+ x\n  d\n+ e"));
    // Applying the diff gives back both texts.
    QStringList rebuilt_old;
    QStringList rebuilt_new;
    for (const DiffLine& line : diff) {
      if (line.kind != DiffLine::kAdded) rebuilt_old << line.text;
      if (line.kind != DiffLine::kRemoved) rebuilt_new << line.text;
    }
    QCOMPARE(rebuilt_old, old_lines);
    QCOMPARE(rebuilt_new, new_lines);
    QCOMPARE(diff_text(diff_lines({}, {"only"})), QString("+ only"));
    QCOMPARE(diff_text(diff_lines({"gone"}, {})), QString("- gone"));
  }

  void badgeTellsEveryOutcomeApart() {
    struct Case {
      Outcome outcome;
      std::optional<LimitKind> limit;
      int exit_code;
      int signal;
      const char* text;
    };
    const Case cases[] = {
        {Outcome::kOk, {}, 0, 0, "OK"},
        {Outcome::kFailed, {}, 3, 0, "FAILED exit 3"},
        {Outcome::kSignaled, {}, -1, 11, "SIGNALED SIGSEGV"},
        {Outcome::kTimedOut, {}, -1, 9, "TIMED OUT"},
        {Outcome::kLimitExceeded, LimitKind::kMemory, -1, 9, "LIMIT memory"},
        {Outcome::kLimitExceeded, LimitKind::kProcesses, -1, 9, "LIMIT processes"},
        {Outcome::kLimitExceeded, LimitKind::kOutput, -1, 9, "LIMIT output"},
        {Outcome::kLimitExceeded, LimitKind::kDisk, -1, 9, "LIMIT disk"},
        {Outcome::kCancelled, {}, -1, 9, "CANCELLED"},
        {Outcome::kSandboxError, {}, -1, 0, "SANDBOX ERROR"},
    };
    QSet<QString> colors;
    for (const Case& c : cases) {
      QCOMPARE(outcome_badge(c.outcome, c.limit, c.exit_code, c.signal).text, QString(c.text));
      // The JSON path (history) gives the same badge as the live one.
      RunResult result;
      result.outcome = c.outcome;
      result.limit = c.limit;
      result.exit_code = c.exit_code;
      result.signal = c.signal;
      QCOMPARE(outcome_badge(to_json(result)).text, QString(c.text));
      if (!c.limit || *c.limit == LimitKind::kMemory) {
        colors.insert(outcome_badge(c.outcome, c.limit, c.exit_code, c.signal).color.name());
      }
    }
    QCOMPARE(colors.size(), 7);  // one colour per outcome
  }
};

QTEST_GUILESS_MAIN(ModelsTest)
#include "models_test.moc"
