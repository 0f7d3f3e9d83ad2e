#include "outcome_badge.h"

#include <nlohmann/json.hpp>

#include "frontend/exit_status.h"

namespace cordon::inspector {

Badge outcome_badge(Outcome outcome, std::optional<LimitKind> limit, int exit_code, int signal) {
  switch (outcome) {
    case Outcome::kOk:
      return {QStringLiteral("OK"), QColor(0x2e, 0x7d, 0x32)};
    case Outcome::kFailed:
      return {QStringLiteral("FAILED exit %1").arg(exit_code), QColor(0xe6, 0x51, 0x00)};
    case Outcome::kSignaled:
      return {
          QStringLiteral("SIGNALED %1").arg(QString::fromStdString(frontend::signal_name(signal))),
          QColor(0x6a, 0x1b, 0x9a)};
    case Outcome::kTimedOut:
      return {QStringLiteral("TIMED OUT"), QColor(0xc6, 0x28, 0x28)};
    case Outcome::kLimitExceeded:
      return {QStringLiteral("LIMIT %1")
                  .arg(limit ? QString::fromUtf8(to_string(*limit).data(),
                                                 static_cast<qsizetype>(to_string(*limit).size()))
                             : QStringLiteral("?")),
              QColor(0xad, 0x14, 0x57)};
    case Outcome::kCancelled:
      return {QStringLiteral("CANCELLED"), QColor(0x61, 0x61, 0x61)};
    case Outcome::kSandboxError:
      return {QStringLiteral("SANDBOX ERROR"), QColor(0x21, 0x21, 0x21)};
  }
  return {QStringLiteral("UNKNOWN"), QColor(Qt::black)};
}

Badge outcome_badge(const nlohmann::json& result) {
  const std::string outcome_text = result.value("outcome", "");
  Outcome outcome = Outcome::kSandboxError;
  for (const Outcome candidate : kAllOutcomes) {
    if (to_string(candidate) == outcome_text) outcome = candidate;
  }
  std::optional<LimitKind> limit;
  if (const auto found = result.find("limit"); found != result.end() && found->is_string()) {
    for (const LimitKind candidate : kAllLimitKinds) {
      if (to_string(candidate) == found->get<std::string>()) limit = candidate;
    }
  }
  return outcome_badge(outcome, limit, result.value("exit_code", -1), result.value("signal", 0));
}

}  // namespace cordon::inspector
