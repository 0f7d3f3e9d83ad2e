#include "code_editor.h"

#include <QFontDatabase>
#include <QPainter>
#include <QTextBlock>

#include "highlighter.h"

namespace cordon::inspector {

class LineNumberArea : public QWidget {
 public:
  explicit LineNumberArea(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
  [[nodiscard]] QSize sizeHint() const override { return {editor_->gutter_width(), 0}; }

 protected:
  void paintEvent(QPaintEvent* event) override { editor_->paint_gutter(event); }

 private:
  CodeEditor* editor_;
};

CodeEditor::CodeEditor(QWidget* parent)
    : QPlainTextEdit(parent),
      gutter_(new LineNumberArea(this)),
      highlighter_(new CodeHighlighter(document())) {
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
  connect(this, &QPlainTextEdit::blockCountChanged, this,
          [this] { setViewportMargins(gutter_width(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this, &CodeEditor::update_gutter);
  setViewportMargins(gutter_width(), 0, 0, 0);
}

void CodeEditor::set_language(Language language) { highlighter_->set_language(language); }

int CodeEditor::gutter_width() const {
  int digits = 1;
  for (int max = std::max(1, blockCount()); max >= 10; max /= 10) ++digits;
  return 8 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 2);
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  const QRect area = contentsRect();
  gutter_->setGeometry(QRect(area.left(), area.top(), gutter_width(), area.height()));
}

void CodeEditor::update_gutter(const QRect& rect, int dy) {
  if (dy != 0) {
    gutter_->scroll(0, dy);
  } else {
    gutter_->update(0, rect.y(), gutter_->width(), rect.height());
  }
}

void CodeEditor::paint_gutter(QPaintEvent* event) {
  QPainter painter(gutter_);
  painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
  painter.setPen(palette().color(QPalette::PlaceholderText));
  QTextBlock block = firstVisibleBlock();
  auto top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  auto bottom = top + qRound(blockBoundingRect(block).height());
  while (block.isValid() && top <= event->rect().bottom()) {
    if (block.isVisible() && bottom >= event->rect().top()) {
      painter.drawText(0, top, gutter_->width() - 4, fontMetrics().height(), Qt::AlignRight,
                       QString::number(block.blockNumber() + 1));
    }
    block = block.next();
    top = bottom;
    bottom = top + qRound(blockBoundingRect(block).height());
  }
}

}  // namespace cordon::inspector
