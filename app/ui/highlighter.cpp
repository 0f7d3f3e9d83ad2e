#include "highlighter.h"

namespace cordon::inspector {
namespace {

QTextCharFormat char_format(const QColor& color, bool bold = false, bool italic = false) {
  QTextCharFormat out;
  out.setForeground(color);
  if (bold) out.setFontWeight(QFont::Bold);
  out.setFontItalic(italic);
  return out;
}

QString word_list(const QStringList& words) {
  return QStringLiteral("\\b(?:%1)\\b").arg(words.join(QLatin1Char('|')));
}

}  // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
  set_language(Language::kSh);
}

void CodeHighlighter::set_language(Language language) {
  language_ = language;
  rules_.clear();
  const QTextCharFormat keyword = char_format(QColor(0x00, 0x33, 0x99), /*bold=*/true);
  const QTextCharFormat string = char_format(QColor(0x06, 0x7d, 0x17));
  const QTextCharFormat number = char_format(QColor(0x17, 0x50, 0xeb));
  const QTextCharFormat comment = char_format(QColor(0x8c, 0x8c, 0x8c), false, /*italic=*/true);
  if (language == Language::kPython) {
    rules_.push_back(
        {QRegularExpression(
             word_list({"and",      "as",       "assert", "async", "await",  "break",  "class",
                        "continue", "def",      "del",    "elif",  "else",   "except", "finally",
                        "for",      "from",     "global", "if",    "import", "in",     "is",
                        "lambda",   "nonlocal", "not",    "or",    "pass",   "raise",  "return",
                        "try",      "while",    "with",   "yield", "None",   "True",   "False"})),
         keyword});
    rules_.push_back({QRegularExpression(QStringLiteral("\\b[0-9]+(?:\\.[0-9]+)?\\b")), number});
    rules_.push_back(
        {QRegularExpression(QStringLiteral(R"("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')")),
         string});
    rules_.push_back({QRegularExpression(QStringLiteral("#[^\n]*$")), comment});
  } else {
    rules_.push_back({QRegularExpression(word_list(
                          {"if",     "then", "else",   "elif",   "fi",       "for", "while",
                           "until",  "do",   "done",   "case",   "esac",     "in",  "function",
                           "return", "exit", "export", "local",  "readonly", "set", "unset",
                           "trap",   "exec", "echo",   "printf", "cd",       "test"})),
                      keyword});
    rules_.push_back({QRegularExpression(QStringLiteral("\\$\\{?[A-Za-z_0-9@#?$!*-]+\\}?")),
                      char_format(QColor(0x87, 0x10, 0x94))});
    rules_.push_back(
        {QRegularExpression(QStringLiteral(R"("[^"\\]*(?:\\.[^"\\]*)*"|'[^']*')")), string});
    // A comment starts at a # that begins a word.
    rules_.push_back({QRegularExpression(QStringLiteral("(?:^|(?<=\\s))#[^\n]*$")), comment});
  }
  rehighlight();
}

void CodeHighlighter::highlightBlock(const QString& text) {
  // Later rules win: a # inside a string was coloured as a string, then the comment rule
  // only matches a # that starts a word, which is the usual case for both languages.
  for (const Rule& rule : rules_) {
    auto matches = rule.pattern.globalMatch(text);
    while (matches.hasNext()) {
      const auto match = matches.next();
      setFormat(static_cast<int>(match.capturedStart()), static_cast<int>(match.capturedLength()),
                rule.format);
    }
  }
}

}  // namespace cordon::inspector
