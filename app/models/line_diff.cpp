#include "line_diff.h"

#include <algorithm>
#include <cstddef>

namespace cordon::inspector {

std::vector<DiffLine> diff_lines(const QStringList& old_lines, const QStringList& new_lines) {
  const auto n = static_cast<std::size_t>(old_lines.size());
  const auto m = static_cast<std::size_t>(new_lines.size());
  // common[i][j]: length of the LCS of old[i..] and new[j..]. Descriptions are a few dozen
  // lines, so the quadratic table is small.
  std::vector<std::vector<int>> common(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      common[i][j] = old_lines[qsizetype(i)] == new_lines[qsizetype(j)]
                         ? common[i + 1][j + 1] + 1
                         : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::vector<DiffLine> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && old_lines[qsizetype(i)] == new_lines[qsizetype(j)]) {
      out.push_back({DiffLine::kSame, old_lines[qsizetype(i)]});
      ++i;
      ++j;
    } else if (j < m && (i == n || common[i][j + 1] >= common[i + 1][j])) {
      out.push_back({DiffLine::kAdded, new_lines[qsizetype(j++)]});
    } else {
      out.push_back({DiffLine::kRemoved, old_lines[qsizetype(i++)]});
    }
  }
  return out;
}

QString diff_text(const std::vector<DiffLine>& diff) {
  QStringList lines;
  for (const DiffLine& line : diff) {
    const char* mark = line.kind == DiffLine::kSame    ? "  "
                       : line.kind == DiffLine::kAdded ? "+ "
                                                       : "- ";
    lines << QString::fromLatin1(mark) + line.text;
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace cordon::inspector
