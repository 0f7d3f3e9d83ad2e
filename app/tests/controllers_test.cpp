// The inspector's controllers on their own, without widgets: RunController and
// AuditController run core work on worker threads (WorkerThread) and hand output, state,
// verdicts and results over to the GUI thread. The widgets tests drive them through the
// tabs; here each hand-over is exercised directly, so that the tsan preset (this is a
// `threaded` test) sees every path: output streamed while a run goes, several controllers
// at once recording into one history, cancel, and a controller destroyed mid-run or
// mid-audit.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <memory>
#include <vector>

#include "audit_controller.h"
#include "backend_list.h"
#include "frontend/history.h"
#include "history_model.h"
#include "result_metatype.h"
#include "run_controller.h"
#include "test_env.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {

constexpr int kWaitMs = 60000;  // generous: two shared cores, and TSan slows runs ~10x

RunRequest sh(std::string code, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  RunRequest request;
  request.code = std::move(code);
  request.language = Language::kSh;
  request.timeout = timeout;
  return request;
}

// What one controller showed the GUI thread: its output per stream and its states, in order.
struct Seen {
  QByteArray out[2];
  QStringList states;
  std::vector<RunResult> results;

  void watch(RunController& controller) {
    QObject::connect(&controller, &RunController::output, &controller,
                     [this](int stream, const QByteArray& chunk) { out[stream] += chunk; });
    QObject::connect(&controller, &RunController::state_changed, &controller,
                     [this](const QString& state) { states << state; });
    QObject::connect(&controller, &RunController::finished, &controller,
                     [this](const RunResult& result) { results.push_back(result); });
  }
};

}  // namespace

class ControllersTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path history_;
  BackendListPtr backends_;

  std::int64_t recorded(const std::string& search) const {
    Result<history::HistoryStore> store = history::HistoryStore::open(history_);
    if (!store) return -1;
    history::Query query;
    query.search = search;
    query.source = "inspector";
    const Result<std::int64_t> n = store->count(query);
    return n ? *n : -1;
  }

  bool have_namespace() const { return backends_->backend("namespace") != nullptr; }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    history_ = test::isolate(dir_).toStdString();
    register_result_metatype();
    backends_ = std::make_shared<const BackendList>();
    QVERIFY2(backends_->backend("subprocess") != nullptr, "the subprocess plugin is built");
  }

  void runStreamsOutputAndRecordsIt() {
    RunController controller;
    controller.set_history_path(history_);
    Seen seen;
    seen.watch(controller);
    QSignalSpy finished(&controller, &RunController::finished);
    // Output in several pieces with pauses, so the GUI thread drains while the worker writes.
    QVERIFY(controller.start(
        backends_, "subprocess",
        sh("for i in 1 2 3 4 5 6; do echo streamed-$i; sleep 0.05; done; echo on-stderr >&2")));
    QVERIFY(controller.running());
    QVERIFY(!controller.start(backends_, "subprocess", sh("true")));  // one run at a time
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(!controller.running());
    QCOMPARE(seen.results.size(), std::size_t{1});
    const RunResult& result = seen.results.front();
    QCOMPARE(result.outcome, Outcome::kOk);
    QCOMPARE(seen.out[0], QByteArray("streamed-1\nstreamed-2\nstreamed-3\nstreamed-4\n"
                                     "streamed-5\nstreamed-6\n"));
    QCOMPARE(seen.out[1], QByteArray("on-stderr\n"));
    QCOMPARE(QByteArray::fromStdString(result.stdout_data), seen.out[0]);
    QVERIFY2(seen.states.contains("running"), qPrintable(seen.states.join(',')));
    // Recorded from the worker thread before `finished` reached the GUI thread.
    QCOMPARE(recorded("streamed-"), std::int64_t{1});
  }

  void controllersAtOnceShareOneHistory() {
    // As the Compare tab runs them: one controller per column, all at once, every worker
    // writing to the same history file.
    QStringList names{"subprocess", "subprocess", "subprocess"};
    if (have_namespace()) {
      names << "namespace" << "namespace";
    } else if (test::require_kernel_features()) {
      QFAIL("namespace backend unavailable");
    }
    std::vector<std::unique_ptr<RunController>> controllers;
    std::vector<std::unique_ptr<Seen>> seen;
    std::vector<std::unique_ptr<QSignalSpy>> spies;
    for (int i = 0; i < names.size(); ++i) {
      controllers.push_back(std::make_unique<RunController>());
      controllers.back()->set_history_path(history_);
      seen.push_back(std::make_unique<Seen>());
      seen.back()->watch(*controllers.back());
      spies.push_back(
          std::make_unique<QSignalSpy>(controllers.back().get(), &RunController::finished));
      QVERIFY(controllers.back()->start(backends_, names[i],
                                        sh("echo parallel-" + std::to_string(i) +
                                           "; sleep 0.2; echo done-" + std::to_string(i))));
    }
    for (auto& spy : spies) QVERIFY(spy->count() == 1 || spy->wait(kWaitMs));
    for (std::size_t i = 0; i < controllers.size(); ++i) {
      QCOMPARE(seen[i]->results.size(), std::size_t{1});
      QCOMPARE(seen[i]->results.front().outcome, Outcome::kOk);
      const std::string n = std::to_string(i);
      QCOMPARE(seen[i]->results.front().stdout_data, "parallel-" + n + "\ndone-" + n + "\n");
      QCOMPARE(seen[i]->out[0], QByteArray::fromStdString("parallel-" + n + "\ndone-" + n + "\n"));
    }
    QCOMPARE(recorded("parallel-"), std::int64_t(names.size()));
  }

  // Sessions (issue #41): with sessions kept, calls reach one session of the backend (the
  // fixture's counts its calls), each result names its session and index, the workspace is
  // listed, reset and close work, and a backend without sessions fails the call with why.
  void callsKeepOneSessionWhenAsked() {
    const BackendListPtr with_fixtures = test::fixture_backends();
    QVERIFY(with_fixtures->backend("fixture") != nullptr);
    RunController controller;
    controller.set_history_path(history_);
    Seen seen;
    seen.watch(controller);
    QSignalSpy finished(&controller, &RunController::finished);
    controller.set_keep_session(true);
    for (int call = 1; call <= 2; ++call) {
      QVERIFY(controller.start(with_fixtures, "fixture", sh("x")));
      QVERIFY(finished.wait(kWaitMs));
    }
    QCOMPARE(seen.results.size(), std::size_t{2});
    QCOMPARE(seen.results[1].stdout_data, std::string("2 sh x"));  // the same session
    const QString id = controller.session_id();
    QCOMPARE(id.size(), 32);
    QCOMPARE(controller.session_calls(), qint64{2});
    QVERIFY(seen.results[1].session.has_value());
    QCOMPARE(seen.results[1].session->id, id.toStdString());
    QCOMPARE(seen.results[1].session->call, std::int64_t{2});
    QVERIFY(controller.session_files().empty());
    QVERIFY(controller.reset_session());
    QVERIFY(controller.start(with_fixtures, "fixture", sh("y")));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(seen.results[2].stdout_data, std::string("1 sh y"));  // reset: counts from 1
    controller.close_session();
    QVERIFY(controller.session_id().isEmpty());

    // The plain subprocess backend holds none: the call fails with the reason.
    QVERIFY(controller.start(backends_, "subprocess", sh("echo never")));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(seen.results[3].outcome, Outcome::kSandboxError);
    QVERIFY2(seen.results[3].error.value_or("").find("does not hold sessions") != std::string::npos,
             seen.results[3].error.value_or("").c_str());
    controller.set_keep_session(false);
    QVERIFY(controller.start(backends_, "subprocess", sh("echo once")));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(seen.results[4].outcome, Outcome::kOk);
    QVERIFY(!seen.results[4].session.has_value());
  }

  // The session panel's figures (issue #41): the backend's stats (the fixture's carry
  // values), the session's age and idle time, read between calls only; none after Close.
  void aSessionsStatsAreReadBetweenCalls() {
    const BackendListPtr with_fixtures = test::fixture_backends();
    QVERIFY(with_fixtures->backend("fixture") != nullptr);
    RunController controller;
    QSignalSpy finished(&controller, &RunController::finished);
    controller.set_keep_session(true);
    QVERIFY(!controller.session_info().has_value());  // nothing open yet
    QVERIFY(controller.start(with_fixtures, "fixture", sh("x")));
    QVERIFY(finished.wait(kWaitMs));
    QTest::qWait(30);
    QVERIFY(controller.start(with_fixtures, "fixture", sh("hold:300")));
    QVERIFY(!controller.session_info().has_value());  // the worker has the session now
    QVERIFY(finished.wait(kWaitMs));
    const std::optional<frontend::SessionInfo> info = controller.session_info();
    QVERIFY(info.has_value());
    QCOMPARE(QString::fromStdString(info->id), controller.session_id());
    QCOMPARE(info->backend, std::string("fixture"));
    QCOMPARE(info->calls, std::int64_t{2});
    QVERIFY(info->stats.has_value());
    QCOMPARE(info->stats->memory_kb, std::optional<std::int64_t>(1234));
    QCOMPARE(info->stats->cpu_ms, std::optional<std::int64_t>(56));
    QVERIFY(info->stats->interpreter_alive);
    // Open since the first call, idle since the second ended (which held 300 ms).
    QVERIFY2(info->age >= std::chrono::milliseconds(330),
             std::to_string(info->age.count()).c_str());
    QVERIFY(info->idle < info->age - std::chrono::milliseconds(300));
    controller.close_session();
    QVERIFY(!controller.session_info().has_value());
    QVERIFY(controller.session_backend().isEmpty());
  }

  // A session belongs to the backend list that opened it: the same backend's name in
  // another environment (another list) is another sandbox, so its call opens a new session
  // instead of reaching the old one.
  void aCallFromAnotherEnvironmentOpensAnotherSession() {
    const BackendListPtr first = test::fixture_backends();
    const BackendListPtr second = test::fixture_backends();
    RunController controller;
    Seen seen;
    seen.watch(controller);
    QSignalSpy finished(&controller, &RunController::finished);
    controller.set_keep_session(true);
    QVERIFY(controller.start(first, "fixture", sh("x")));
    QVERIFY(finished.wait(kWaitMs));
    const QString id = controller.session_id();
    QVERIFY(controller.start(second, "fixture", sh("y")));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(seen.results[1].stdout_data, std::string("1 sh y"));  // a fresh session
    QVERIFY(controller.session_id() != id);
    QCOMPARE(seen.results[1].session->call, std::int64_t{1});
  }

  // History (issue #41): each call of a session is recorded with its session and index, and
  // the history filtered to that session lists its calls in order, each saying its index.
  void theHistoryListsASessionsCallsInOrder() {
    const BackendListPtr with_fixtures = test::fixture_backends();
    RunController controller;
    controller.set_history_path(history_);
    QSignalSpy finished(&controller, &RunController::finished);
    controller.set_keep_session(true);
    for (const char* code : {"history-first", "history-second"}) {
      QVERIFY(controller.start(with_fixtures, "fixture", sh(code)));
      QVERIFY(finished.wait(kWaitMs));
    }
    const QString id = controller.session_id();
    HistoryModel model;
    QVERIFY(model.open(history_));
    model.set_session_filter(id);
    QCOMPARE(model.rowCount(), 2);
    const char* const codes[] = {"history-first", "history-second"};
    for (int row = 0; row < 2; ++row) {
      const std::optional<history::RunRecord> record = model.record_at(row);
      QVERIFY(record.has_value());
      QCOMPARE(record->code, std::string(codes[row]));
      QVERIFY(record->session.has_value());
      QCOMPARE(record->session->id, id.toStdString());
      QCOMPARE(record->session->call, std::int64_t{row + 1});
      QCOMPARE(model.index(row, HistoryModel::kSource).data().toString(),
               QString("inspector · call %1").arg(row + 1));
    }
  }

  void cancelStopsARun() {
    RunController controller;
    Seen seen;
    seen.watch(controller);
    QSignalSpy finished(&controller, &RunController::finished);
    QVERIFY(controller.start(backends_, "subprocess", sh("echo started; exec sleep 30")));
    QTRY_VERIFY_WITH_TIMEOUT(seen.out[0].contains("started"), kWaitMs);
    controller.cancel();
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(seen.results.front().outcome, Outcome::kCancelled);
  }

  void destroyedMidRunCancelsAndWaits() {
    auto controller = std::make_unique<RunController>();
    Seen seen;
    seen.watch(*controller);
    QVERIFY(controller->start(backends_, "subprocess", sh("echo started; exec sleep 30")));
    QTRY_VERIFY_WITH_TIMEOUT(seen.out[0].contains("started"), kWaitMs);
    const auto before = std::chrono::steady_clock::now();
    controller.reset();  // cancels, and waits for the worker before the members go
    QVERIFY(std::chrono::steady_clock::now() - before < std::chrono::seconds(25));
    QVERIFY(seen.results.empty());  // destroyed: nothing is emitted
  }

  void auditSubsetReportsEachVerdict() {
    if (!have_namespace()) {
      if (test::require_kernel_features()) QFAIL("namespace backend unavailable");
      QSKIP("namespace backend unavailable here");
    }
    AuditController controller;
    std::vector<std::pair<QString, audit::AttemptVerdict>> verdicts;
    connect(&controller, &AuditController::verdict, &controller,
            [&](const QString& backend, const audit::AttemptVerdict& v) {
              verdicts.emplace_back(backend, v);
            });
    QSignalSpy progress(&controller, &AuditController::progress);
    QSignalSpy finished(&controller, &AuditController::finished);
    // Harmless attempts only: a loopback connection and a ptrace call.
    QVERIFY(controller.start(backends_, {"namespace"}, {"net-loopback-tcp", "sys-ptrace"}));
    QVERIFY(controller.running());
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.at(0).at(0).toInt(), 0);  // a partial audit is never stored
    QCOMPARE(finished.at(0).at(1).toString(), QString());
    QCOMPARE(verdicts.size(), std::size_t{2});
    for (const auto& [backend, v] : verdicts) {
      QCOMPARE(backend, QString("namespace"));
      QVERIFY2(v.status == audit::AttemptStatus::kBlocked, v.id.c_str());
    }
    QVERIFY(!progress.isEmpty());
    QCOMPARE(progress.last().at(0).toInt(), 2);
    QCOMPARE(progress.last().at(1).toInt(), 2);
  }

  void auditCancelledBetweenAttempts() {
    AuditController controller;
    int verdicts = 0;
    connect(&controller, &AuditController::verdict, &controller, [&] { ++verdicts; });
    QSignalSpy finished(&controller, &AuditController::finished);
    // The flag is read by the worker before each attempt: set at once, at most the attempt
    // the worker may already have begun runs (two harmless loopback connections).
    QVERIFY(controller.start(backends_, {"subprocess"}, {"net-loopback-tcp", "net-loopback-udp"}));
    controller.cancel();
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(verdicts <= 1);
    QCOMPARE(finished.at(0).at(0).toInt(), 0);
    QCOMPARE(finished.at(0).at(1).toString(), QString());
  }

  void auditDestroyedMidAuditWaits() {
    auto controller = std::make_unique<AuditController>();
    QVERIFY(controller->start(backends_, {"subprocess"}, {"net-loopback-tcp"}));
    const auto before = std::chrono::steady_clock::now();
    controller.reset();  // cancels between attempts and waits for the one in progress
    QVERIFY(std::chrono::steady_clock::now() - before < std::chrono::seconds(60));
  }
};

QTEST_GUILESS_MAIN(ControllersTest)
#include "controllers_test.moc"
