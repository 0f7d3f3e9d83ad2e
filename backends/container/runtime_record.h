// Which runtime made a container, kept in its bundle, so that whoever removes it later (a
// later cordon's sweep of a dead instance, whatever runtime that cordon was given) asks
// the same runtime with the same global flags.
//
// Why: runsc's global flags (the platform, --network, ...) are not kept in its state, and
// runc cannot delete a runsc container (nor the reverse): a sweep that used its own
// runtime left a dead runsc instance's container state, and its sandbox's host objects,
// behind.
//
// The record is `<bundle>/runtime`: the runtime's absolute path on one line, then one
// global flag per line. It is written before the runtime is started and read back only
// as an argv for a runtime cordon itself would find (runc, crun, runsc on the system PATH)
// with options only: anything else is not run, and the sweeper's own runtime is used.
#pragma once

#include <filesystem>

#include "cordon/error.h"
#include "runtime_cli.h"

namespace cordon::oci {

inline constexpr const char* kRuntimeRecordName = "runtime";

// Writes `<bundle>/runtime` for `runtime` (mode 0600).
[[nodiscard]] Status record_runtime(const std::filesystem::path& bundle, const RuntimeCli& runtime);

// The runtime that made the container of `bundle`, with `fallback`'s state root: its
// record when there is a valid one, else `fallback` (a bundle from before records, or one
// whose record was never completed).
[[nodiscard]] RuntimeCli recorded_runtime(const std::filesystem::path& bundle,
                                          const RuntimeCli& fallback);

}  // namespace cordon::oci
