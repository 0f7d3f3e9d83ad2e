// cordon-inspector: the Qt 6 desktop app (issue #6). All sandbox logic is in core/ and the
// backend plugins; this is widgets over thin adapters (app/models, app/ui).
#include <QApplication>
#include <memory>

#include "main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("cordon"));
  QApplication::setApplicationName(QStringLiteral("inspector"));
  auto backends = std::make_shared<const cordon::inspector::BackendList>();
  cordon::inspector::MainWindow window(backends);
  window.resize(1100, 760);
  window.show();
  return QApplication::exec();
}
