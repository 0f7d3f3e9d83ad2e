// Passes the code's output through to cordon's own stdout and stderr while it runs.
//
// The backend calls the observer on its run thread, so the observer must not block on a
// slow reader of cordon's stdout (that would stall the backend's poll loop and its
// deadline). Chunks go to a queue drained by a writer thread instead. Only chunks the
// backend kept are relayed, so the output cap holds for the pass-through too and the
// queue never holds more than the caps.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "cordon/observer.h"
#include "cordon/result.h"

namespace cordon::cli {

class OutputRelay final : public RunObserver {
 public:
  OutputRelay(int stdout_fd, int stderr_fd);
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;
  ~OutputRelay() override;

  void on_output(Stream stream, std::string_view chunk, bool kept) override;

  // After run(): writes whatever the result holds that was never streamed (a backend
  // need not stream at all), then waits until everything is written.
  void finish(const RunResult& result);

 private:
  struct Chunk {
    Stream stream;
    std::string bytes;
  };
  void drain();
  void stop();

  int stdout_fd_;
  int stderr_fd_;
  std::uint64_t streamed_stdout_ = 0;  // run thread only
  std::uint64_t streamed_stderr_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Chunk> queue_;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace cordon::cli
