// What every inspector test needs first: a private history file and settings directory,
// so no test reads or writes the user's, and the CLI binary for runs "from elsewhere".
#pragma once

#include <QByteArray>
#include <QString>
#include <QTemporaryDir>

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

inline bool require_kernel_features() { return qgetenv("CORDON_REQUIRE_KERNEL_FEATURES") == "1"; }

}  // namespace cordon::inspector::test
