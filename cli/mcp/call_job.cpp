#include "mcp/call_job.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>

#include "frontend/history.h"
#include "frontend_names.h"
#include "mcp/jsonrpc.h"
#include "mcp/service.h"
#include "tool_call.h"

namespace cordon::cli::mcp {
namespace {

std::string progress_message(std::chrono::milliseconds elapsed, std::uint64_t bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "running for %.1f s, %llu bytes of output so far",
                static_cast<double>(elapsed.count()) / 1000.0,
                static_cast<unsigned long long>(bytes));
  return text;
}

}  // namespace

CallJob::CallJob(Service& service, CallOwner& owner, CallSpec spec)
    : service_(service),
      owner_(owner),
      spec_(std::move(spec)),
      received_(std::chrono::steady_clock::now()) {}

void CallJob::withdraw() {
  withdrawn_ = true;
  cancel_.cancel();
}

void CallJob::drop() { end_unrun(); }

void CallJob::end_unrun() {
  spec_.sink->no_response(spec_.id);
  owner_.call_finished(spec_.key);
}

void CallJob::on_output(Stream /*stream*/, std::string_view chunk, bool /*kept*/) {
  output_bytes_.fetch_add(chunk.size(), std::memory_order_relaxed);
}

// One notifications/progress: progress is the elapsed time in ms since the call came in,
// strictly increasing as the spec requires.
void CallJob::tick(std::chrono::steady_clock::time_point now, std::int64_t* last_progress) {
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - received_);
  const std::int64_t progress = std::max(elapsed.count(), *last_progress + 1);
  *last_progress = progress;
  const bool sent = spec_.sink->send(jsonrpc::notification(
      "notifications/progress",
      {{"progressToken", *spec_.progress_token},
       {"progress", progress},
       {"message", progress_message(elapsed, output_bytes_.load(std::memory_order_relaxed))}}));
  if (!sent) owner_.peer_gone();
}

void CallJob::run() {
  if (withdrawn_ || cancel_.cancelled()) {
    end_unrun();
    return;
  }
  // The ticker stops (and is joined) before the response goes out: no progress after it.
  std::mutex ticker_mutex;
  std::condition_variable_any ticker_wake;
  std::jthread ticker;
  if (spec_.progress_token) {
    ticker = std::jthread([&](const std::stop_token& stop) {
      std::int64_t last = 0;
      std::unique_lock lock(ticker_mutex);
      while (!ticker_wake.wait_for(lock, stop, kProgressInterval, [] { return false; })) {
        if (stop.stop_requested()) return;
        lock.unlock();
        tick(std::chrono::steady_clock::now(), &last);
        lock.lock();
      }
    });
  }
  const auto started = std::chrono::system_clock::now();
  std::optional<RunResult> result;
  nlohmann::json answer;
  if (spec_.operation) {
    answer = spec_.operation(cancel_.token());
  } else if (!spec_.session) {
    result = service_.backend().run(spec_.request, cancel_.token(), this);
  } else if (frontend::SessionRegistry* sessions = service_.sessions(); sessions == nullptr) {
    answer = tool_error_result(service_.sessions_refusal());
  } else if (Result<RunResult> ran = sessions->run(spec_.session->id, spec_.session->owner,
                                                   spec_.request, cancel_.token(), this);
             ran) {
    result = std::move(*ran);
  } else {
    // Nothing ran (an unknown, ended or busy session, or cancelled while it waited).
    answer = tool_error_result(ran.error().message);
  }
  const auto finished = std::chrono::system_clock::now();
  if (ticker.joinable()) {
    ticker.request_stop();
    ticker.join();
  }
  if (result) answer = tool_result(*result, spec_.structured);
  if (withdrawn_) {
    spec_.sink->no_response(spec_.id);
  } else if (!spec_.sink->send(jsonrpc::result_response(spec_.id, answer))) {
    owner_.peer_gone();
  }
  // After the response: the history is off the latency path (a writer thread stores it).
  if (result) {
    history::RunRecord record =
        history::make_record(spec_.request, *result, started, finished, "mcp");
    record.client = spec_.client;
    service_.record(std::move(record));
  }
  owner_.call_finished(spec_.key);
}

}  // namespace cordon::cli::mcp
