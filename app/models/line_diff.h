// A line diff of two texts (longest common subsequence), for comparing two versions of a
// rendered tool description: each line kept, removed (only in the old) or added.
#pragma once

#include <QString>
#include <QStringList>
#include <vector>

namespace cordon::inspector {

struct DiffLine {
  enum Kind { kSame, kRemoved, kAdded };
  Kind kind = kSame;
  QString text;
};

[[nodiscard]] std::vector<DiffLine> diff_lines(const QStringList& old_lines,
                                               const QStringList& new_lines);
// "  same", "- removed", "+ added", one per line.
[[nodiscard]] QString diff_text(const std::vector<DiffLine>& diff);

}  // namespace cordon::inspector
