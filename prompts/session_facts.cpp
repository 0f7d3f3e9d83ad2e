#include "prompts/session_facts.h"

#include "cordon/units.h"

namespace cordon::prompts {

std::map<std::string, std::string> session_sentences(const SessionFacts& facts) {
  const bool python = facts.keeps_python;
  std::map<std::string, std::string> out;
  out["sessions"] = std::string("To keep files") + (python ? " and python variables" : "") +
                    " from one call to the next, open a session with session_open and pass its "
                    "id as session.";
  out["session_keeps"] =
      "A session keeps its working directory, the workspace: files one call writes are there "
      "for the next (at most " +
      format_size(facts.workspace_bytes) + " in all)." +
      (python ? " Python calls share one interpreter: variables, imports and loaded data "
                "persist, and the value of a call's last expression comes back as value."
              : "");
  out["session_not_kept"] =
      std::string(python ? "sh and bash calls are a fresh process each: shell variables"
                         : "Every call is a fresh process, python's too: variables") +
      " do not persist, and no process outlives its call.";
  out["session_queue"] = "One call runs at a time in a session; up to " +
                         std::to_string(facts.max_waiting) +
                         " more wait their turn, and past that a call is refused as busy.";
  out["session_lifetime"] = "A session ends after " + format_duration(facts.idle_timeout) +
                            " without a call, " + format_duration(facts.max_age) +
                            " after it was opened at the latest, or when this client's MCP "
                            "session ends; this server holds at most " +
                            std::to_string(facts.max_sessions) + " sessions at once.";
  out["session_state_lost"] =
      python ? "A call that times out, is cancelled or hits the memory limit restarts the "
               "interpreter: its result says state_lost, its variables are gone and its files "
               "are kept."
             : "A call that times out, is cancelled or hits the memory limit has every process "
               "of it stopped; the files are kept.";
  out["session_reset"] =
      python ? "Restart a session's python interpreter: its variables and imports are gone, "
               "the files in its workspace are kept."
             : "Reset a session: an interpreter it keeps is restarted, the files in its "
               "workspace are kept.";
  return out;
}

std::map<std::string, std::string> session_values(const SessionFacts& facts) {
  return {{"max_sessions", std::to_string(facts.max_sessions)},
          {"session_idle", format_duration(facts.idle_timeout)},
          {"session_max_age", format_duration(facts.max_age)},
          {"workspace_size", format_size(facts.workspace_bytes)},
          {"max_read_size", format_size(facts.max_read_bytes)},
          {"max_write_size", format_size(facts.max_write_bytes)}};
}

}  // namespace cordon::prompts
