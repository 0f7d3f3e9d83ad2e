#include "display_text.h"

#include <QRegularExpression>

namespace cordon::inspector {

QString display_text(const QByteArray& bytes) {
  QString text = QString::fromUtf8(bytes);
  if (!text.contains(QChar(0x1b))) return text;
  // CSI: ESC [ parameters intermediates final (ECMA-48 5.4); OSC: ESC ] ... BEL or ESC \;
  // any other ESC with its one following character.
  static const QRegularExpression kEscape(QStringLiteral(
      "\\x1b\\[[0-?]*[ -/]*[@-~]|\\x1b\\][^\\x07\\x1b]*(?:\\x07|\\x1b\\\\)?|\\x1b[@-_]?"));
  return text.remove(kEscape);
}

qsizetype line_count(const QString& text) {
  if (text.isEmpty()) return 0;
  return text.count(QLatin1Char('\n')) + (text.endsWith(QLatin1Char('\n')) ? 0 : 1);
}

}  // namespace cordon::inspector
