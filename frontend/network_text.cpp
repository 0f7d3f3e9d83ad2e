#include "frontend/network_text.h"

#include "cordon/net/address.h"
#include "cordon/text.h"
#include "cordon/units.h"

namespace cordon::frontend {

std::vector<std::string> network_lines(const NetworkReport& report) {
  std::vector<std::string> lines;
  if (report.connections.empty() && report.dropped == 0) {
    lines.emplace_back("no connection was asked for");
  }
  for (const NetConnection& c : report.connections) {
    std::string line = c.allowed ? "allowed " : "denied ";
    if (!c.method.empty()) line += c.method + " ";
    line +=
        c.host.empty() ? std::string("(unreadable request)") : net::format_endpoint(c.host, c.port);
    if (c.allowed) {
      if (!c.address.empty() && c.address != c.host) line += " (" + c.address + ")";
      line += ": " + format_size(c.bytes_out) + " out, " + format_size(c.bytes_in) + " in";
      // A connection cut by a limit says so in its reason.
      if (const auto cut = c.why.find("; cut off: "); cut != std::string::npos) {
        line += " (" + c.why.substr(cut + 2) + ")";
      }
    } else {
      line += ": " + c.why;
    }
    lines.push_back(to_valid_utf8(line));
  }
  if (report.dropped != 0) {
    lines.push_back(std::to_string(report.dropped) + " more connection(s) not listed");
  }
  if (report.limit_reached) {
    lines.push_back("the run's network " + *report.limit_reached + " limit was reached");
  }
  return lines;
}

}  // namespace cordon::frontend
