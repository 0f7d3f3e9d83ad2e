// Which interpreter runs each language inside a backend's sandbox, measured there: the
// audit runs a one-line probe per language through the backend and stores the answers
// with its report, so the tool description states the versions the code will really get
// (a sandbox's /usr may differ from the caller's PATH), never ones written by hand.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/request.h"

namespace cordon::audit {

struct InterpreterVersion {
  Language language = Language::kSh;
  std::string version;  // "Python 3.11.2", "bash 5.2.15(1)-release", "dash"
  bool operator==(const InterpreterVersion&) const = default;
};

// One run per language through `backend`; a language whose probe fails or prints
// nothing usable is left out (the description then says nothing about it).
[[nodiscard]] std::vector<InterpreterVersion> measure_interpreters(Backend& backend);

[[nodiscard]] nlohmann::json to_json(const std::vector<InterpreterVersion>& interpreters);
// Entries it cannot read are skipped: a version is information, never a claim.
[[nodiscard]] std::vector<InterpreterVersion> interpreters_from_json(const nlohmann::json& j);

}  // namespace cordon::audit
