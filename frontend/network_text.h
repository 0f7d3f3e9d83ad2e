// A run's network report (issue #16) in lines for people: the CLI prints them after the
// status line, the inspector shows them with the result. One line per connection asked
// for, allowed or denied, with why and what went through.
#pragma once

#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::frontend {

// "allowed CONNECT pypi.org:443 (151.101.0.223): 1.2 KiB out, 310.5 KiB in"
// "denied GET other.test:80: other.test:80 is not on the allow-list"
// then "N more connections not kept" and "the run's network byte limit was reached".
[[nodiscard]] std::vector<std::string> network_lines(const NetworkReport& report);

}  // namespace cordon::frontend
