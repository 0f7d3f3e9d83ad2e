// The code editor: monospace, line numbers in a gutter, sh/Python colouring.
#pragma once

#include <QPlainTextEdit>

#include "cordon/request.h"

namespace cordon::inspector {

class CodeHighlighter;

class CodeEditor : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit CodeEditor(QWidget* parent = nullptr);
  void set_language(Language language);
  [[nodiscard]] int gutter_width() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  friend class LineNumberArea;
  void paint_gutter(QPaintEvent* event);
  void update_gutter(const QRect& rect, int dy);

  QWidget* gutter_;
  CodeHighlighter* highlighter_;
};

}  // namespace cordon::inspector
