// A stand-in for cli/mcp/session.cpp in the HTTP transport's test: Session's members
// with echo behaviour, so the transport is tested without a backend.
//   initialize     → {protocolVersion (as asked), capabilities, serverInfo}
//   ping           → {}
//   slow {ms}      → a notifications/progress at once, the response {"slept": ms} after ms
//                    from another thread, unless cancelled (notifications/cancelled,
//                    cancel_all, or a send() that fails)
//   other request  → -32601; notifications → nothing; bad JSON → -32700
// and not_ready(), as stats().auditing says.
#pragma once

#include <atomic>

namespace cordon::cli::mcp {
class Service {};  // the fake's: the transport only passes it on
}  // namespace cordon::cli::mcp

namespace cordon::test::fake_mcp {

struct Stats {
  std::atomic<int> cancel_all_calls{0};
  std::atomic<int> cancelled_calls{0};  // slow calls that ended without their response
  std::atomic<int> finished_calls{0};   // slow calls that sent their response
  // What not_ready() answers: set, the transport refuses every POST as while a first
  // start's audit runs (503, Retry-After 5); cleared, it serves.
  std::atomic<bool> auditing{false};
};
Stats& stats();

}  // namespace cordon::test::fake_mcp
