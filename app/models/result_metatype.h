// RunResult travels in queued signals (worker thread -> GUI thread).
#pragma once

#include <QMetaType>

#include "cordon/result.h"

Q_DECLARE_METATYPE(cordon::RunResult)

namespace cordon::inspector {
void register_result_metatype();
}  // namespace cordon::inspector
