// Output bytes as the views show them: UTF-8 decoded (U+FFFD for what is not), with ANSI
// escape sequences (colours, cursor moves: CSI and OSC) removed, since a text view would
// draw their ESC as a box and their parameters as text. The raw bytes stay in the Result's
// JSON and the saved history.
#pragma once

#include <QByteArray>
#include <QString>

namespace cordon::inspector {

[[nodiscard]] QString display_text(const QByteArray& bytes);

// "1 line", "12 lines": a text's line count (a last line without newline counts).
[[nodiscard]] qsizetype line_count(const QString& text);

}  // namespace cordon::inspector
