// The outcome badge: one short text and colour per outcome, so every outcome is told
// apart at a glance (OK, FAILED exit N, SIGNALED SIGx, TIMED OUT, LIMIT memory/...,
// CANCELLED, SANDBOX ERROR).
#pragma once

#include <QColor>
#include <QString>
#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "cordon/result.h"

namespace cordon::inspector {

struct Badge {
  QString text;
  QColor color;  // background; text is drawn white on it
};

[[nodiscard]] Badge outcome_badge(Outcome outcome, std::optional<LimitKind> limit, int exit_code,
                                  int signal);
// From a Result's JSON (result_json.h), as stored in the history.
[[nodiscard]] Badge outcome_badge(const nlohmann::json& result);

}  // namespace cordon::inspector
