// The shared front-end library (frontend/: backend catalog, plan text, exit statuses, the
// tool description under its audit gate, run history) is the CLI's own vocabulary: its
// names are used unqualified in cordon::cli.
#pragma once

namespace cordon::frontend {}

namespace cordon::cli {
using namespace cordon::frontend;  // NOLINT(google-build-using-namespace)
}  // namespace cordon::cli
