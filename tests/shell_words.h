// What /bin/sh makes of a command line's words: for tests of text meant to be pasted into a
// shell (cordon/text.h shell_quote()). Runs `printf '%s\0' WORDS` and splits its output.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace cordon_test {

inline std::vector<std::string> shell_words(const std::string& words) {
  const std::string command = "printf '%s\\0' " + words;
  FILE* sh = ::popen(command.c_str(), "r");  // /bin/sh -c COMMAND
  if (sh == nullptr) return {"popen failed"};
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, sh)) > 0;) out.append(buffer, n);
  if (::pclose(sh) != 0) return {"sh failed: " + out};
  std::vector<std::string> result;
  for (std::size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos;
       start = end + 1) {
    result.push_back(out.substr(start, end - start));
  }
  return result;
}

}  // namespace cordon_test
