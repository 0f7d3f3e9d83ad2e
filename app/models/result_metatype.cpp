#include "result_metatype.h"

namespace cordon::inspector {

void register_result_metatype() { qRegisterMetaType<cordon::RunResult>("cordon::RunResult"); }

}  // namespace cordon::inspector
