// What every inspector test needs first: a private history file and settings directory,
// so no test reads or writes the user's, and the CLI binary for runs "from elsewhere".
#pragma once

#include <QByteArray>
#include <QString>
#include <QTemporaryDir>
#include <memory>

#include "backend_list.h"

namespace cordon::inspector::test {

// Points CORDON_HISTORY_PATH, CORDON_AUDIT_DIR, CORDON_ENVIRONMENTS_DIR and XDG_CONFIG_HOME
// into `dir`; returns the
// history path.
inline QString isolate(const QTemporaryDir& dir) {
  const QString history = dir.filePath(QStringLiteral("history.sqlite3"));
  qputenv("CORDON_HISTORY_PATH", history.toUtf8());
  qputenv("XDG_CONFIG_HOME", dir.filePath(QStringLiteral("config")).toUtf8());
  qputenv("CORDON_AUDIT_DIR", dir.filePath(QStringLiteral("audit")).toUtf8());
  qunsetenv("CORDON_NO_HISTORY");
  qputenv("CORDON_ENVIRONMENTS_DIR", dir.filePath(QStringLiteral("environments")).toUtf8());
  return history;
}

#ifdef CORDON_TEST_FIXTURE_PLUGIN_DIR
// The backends with the fixture plugins (tests/plugins): "fixture" holds sessions (its
// stats carry values), some fail to load.
inline BackendListPtr fixture_backends() {
  qputenv("CORDON_PLUGIN_PATH", CORDON_TEST_FIXTURE_PLUGIN_DIR);
  auto with_fixtures = std::make_shared<const BackendList>();
  qunsetenv("CORDON_PLUGIN_PATH");
  return with_fixtures;
}
#endif

inline bool require_kernel_features() { return qgetenv("CORDON_REQUIRE_KERNEL_FEATURES") == "1"; }

}  // namespace cordon::inspector::test
