// Renders each tab of the inspector to PNG files (scripts/screenshots.sh):
//   cordon-inspector-screenshots OUT_DIR
// It runs escape-free snippets only: a Python snippet on subprocess, for Compare a snippet
// that fails unless it runs as uid 0 on every loaded backend (so isolation and outcome
// differ: the namespace sandbox's 65534 fails), and a few harmless audit attempts (a loopback
// connection, a ptrace call, a canary file read) on both for Audit, after a full audit of the
// namespace backend (an isolating one) so a stored report is listed. History has a failure
// and a timeout besides. HOME is a temporary directory, so history and audit reports go
// there and the pictures show "~/…", not a temporary path.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <cstdio>
#include <memory>

#include "audit_tab.h"
#include "code_editor.h"
#include "compare_model.h"
#include "compare_tab.h"
#include "history_tab.h"
#include "main_window.h"
#include "run_tab.h"
#include "tool_tab.h"

using namespace cordon;
using namespace cordon::inspector;

namespace {

bool save(MainWindow& window, int tab, const QDir& out, const char* name) {
  window.tabs()->setCurrentIndex(tab);
  QApplication::processEvents();
  const QString path = out.filePath(QString::fromLatin1(name) + ".png");
  if (!window.grab().save(path)) {
    std::fprintf(stderr, "screenshots: cannot write %s\n", qPrintable(path));
    return false;
  }
  std::printf("%s\n", qPrintable(path));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const QDir out(QString::fromLocal8Bit(argv[1]));
  QTemporaryDir scratch;
  qputenv("HOME", scratch.path().toUtf8());
  for (const char* name : {"CORDON_HISTORY_PATH", "CORDON_AUDIT_DIR", "XDG_CONFIG_HOME",
                           "XDG_DATA_HOME", "XDG_STATE_HOME"}) {
    qunsetenv(name);
  }

  auto backends = std::make_shared<const BackendList>();
  MainWindow window(backends);
  window.resize(1100, 720);
  window.show();

  RunTab* run = window.run_tab();
  run->set_backend(QStringLiteral("subprocess"));
  run->set_code(QStringLiteral("# What the model wrote\nimport sys\n\nfor n in range(1, 6):\n"
                               "    print(f\"square of {n} is {n * n}\")\n"
                               "print(\"done\", file=sys.stderr)\n"),
                Language::kPython);
  QSignalSpy finished(run, &RunTab::run_finished);
  run->run();
  if (!finished.wait(30000)) return 1;
  bool ok = save(window, MainWindow::kResult, out, "result");
  // The Run tab as it looks after the run: code, settings, live output.
  ok = save(window, MainWindow::kRun, out, "run") && ok;
  // A failure and a timeout for History (its detail pane opens on the newest, the timeout).
  run->set_code(QStringLiteral("import json\nprint(json.loads('{\"broken\": '))\n"),
                Language::kPython);
  run->run();
  if (!finished.wait(30000)) return 1;
  const bool isolating = backends->backend(QStringLiteral("namespace")) != nullptr;
  if (isolating) run->set_backend(QStringLiteral("namespace"));
  run->set_code(QStringLiteral("import time\nprint('working…', flush=True)\ntime.sleep(30)\n"),
                Language::kPython);
  run->timeout_box()->setValue(1.0);
  run->run();
  if (!finished.wait(30000)) return 1;
  run->timeout_box()->setValue(5.0);
  window.history_tab()->refresh();
  window.history_tab()->select_row(0);
  ok = save(window, MainWindow::kHistory, out, "history") && ok;
  ok = save(window, MainWindow::kPlan, out, "plan") && ok;

  run->set_code(QStringLiteral("echo \"uid $(id -u) on $(hostname)\"\nls / | head -3\n"
                               "[ \"$(id -u)\" = 0 ] || { echo 'not root here' >&2; exit 3; }\n"),
                Language::kSh);
  CompareTab* compare = window.compare_tab();
  compare->check_backends(
      {QStringLiteral("subprocess"), QStringLiteral("namespace"), QStringLiteral("container")});
  QSignalSpy compared(compare, &CompareTab::compared);
  compare->compare();
  if (compared.isEmpty() && !compared.wait(120000)) return 1;
  // The diff pane between the unisolated column and the namespace one.
  const QStringList columns = compare->model()->backends();
  compare->choose_diff(static_cast<int>(columns.indexOf(QStringLiteral("subprocess"))),
                       static_cast<int>(columns.indexOf(QStringLiteral("namespace"))));
  ok = save(window, MainWindow::kCompare, out, "compare") && ok;

  AuditTab* audit = window.audit_tab();
  QSignalSpy audited(audit, &AuditTab::audited);
  if (isolating) {  // every attempt, so its report is stored and listed
    audit->check_backends({QStringLiteral("namespace")});
    audit->check_all_attempts(true);
    audit->audit();
    if (audited.isEmpty() && !audited.wait(600000)) return 1;
    audited.clear();
  }
  audit->check_backends({QStringLiteral("subprocess"), QStringLiteral("namespace")});
  audit->check_attempts({QStringLiteral("net-loopback-tcp"), QStringLiteral("sys-ptrace"),
                         QStringLiteral("fs-read-host-file"), QStringLiteral("env-dump")});
  audit->audit();
  if (audited.isEmpty() && !audited.wait(240000)) return 1;
  audit->select_row(0);
  ok = save(window, MainWindow::kAudit, out, "audit") && ok;
  // The namespace backend's description, its claims proven by the report just stored
  // (marked [unverified] where there is none, e.g. without the namespace backend).
  window.tool_tab()->unverified_box()->setChecked(!isolating);
  window.tool_tab()->format_box()->setCurrentText(QStringLiteral("anthropic"));
  ok = save(window, MainWindow::kTool, out, "tool") && ok;
  return ok ? 0 : 1;
}
