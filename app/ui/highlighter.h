// Syntax colouring for the languages cordon runs: sh/bash and Python. Keywords, strings,
// comments, numbers and (sh) variables; enough to read a snippet, not a full lexer.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

#include "cordon/request.h"

namespace cordon::inspector {

class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  explicit CodeHighlighter(QTextDocument* document);
  void set_language(Language language);
  [[nodiscard]] Language language() const { return language_; }

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  Language language_ = Language::kSh;
  std::vector<Rule> rules_;
};

}  // namespace cordon::inspector
