#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/proc/output_pump.h"
#include "cordon/proc/pipe.h"
#include "cordon/proc/spawn.h"

namespace cordon::proc {
namespace {

using std::chrono::milliseconds;

struct Recorder : RunObserver {
  std::string kept_out, dropped_out;
  void on_output(Stream s, std::string_view chunk, bool kept) override {
    if (s == Stream::kStdout) (kept ? kept_out : dropped_out).append(chunk);
  }
};

struct Pumped {
  PumpStop stop;
  StreamCapture out, err;
  ExitInfo info;
};

Pumped pump_sh(const std::string& script, std::uint64_t cap, milliseconds timeout,
               const std::optional<std::string>& input = std::nullopt, int cancel_fd = -1,
               RunObserver* observer = nullptr) {
  auto out = make_pipe();
  auto err = make_pipe();
  auto in = make_pipe();
  SpawnOptions opts;
  opts.path = "/bin/sh";
  opts.argv = {"sh", "-c", script};
  opts.stdout_fd = out->write.get();
  opts.stderr_fd = err->write.get();
  if (input) opts.stdin_fd = in->read.get();
  auto child = spawn(opts);
  EXPECT_TRUE(child.has_value());
  out->write.reset();
  err->write.reset();
  in->read.reset();
  OutputPump pump(std::move(out->read), std::move(err->read),
                  input ? std::move(in->write) : UniqueFd(),
                  input ? std::string_view(*input) : std::string_view(), cap, observer);
  auto stop = pump.run(child->pidfd(), cancel_fd, Clock::now() + timeout);
  EXPECT_TRUE(stop.has_value());
  (void)child->signal(SIGKILL);
  Pumped p;
  p.stop = *stop;
  p.info = *child->wait();
  EXPECT_TRUE(pump.drain(Clock::now() + std::chrono::seconds(2)).value_or(false));
  p.out = pump.out();
  p.err = pump.err();
  return p;
}

TEST(OutputPump, DrainsBothStreamsConcurrentlyPastTheCap) {
  // 8 MiB on each stream: a sequential reader would deadlock on the other full pipe.
  const auto p = pump_sh("head -c 8388608 /dev/zero & head -c 8388608 /dev/zero >&2; wait", 1 << 20,
                         std::chrono::seconds(30));
  EXPECT_EQ(p.stop.reason, StopReason::kExited);
  EXPECT_EQ(p.out.data.size(), 1u << 20);
  EXPECT_EQ(p.err.data.size(), 1u << 20);
  EXPECT_TRUE(p.out.truncated);
  EXPECT_TRUE(p.err.truncated);
  EXPECT_EQ(p.out.total_bytes, 8u << 20);
  EXPECT_EQ(p.err.total_bytes, 8u << 20);
}

TEST(OutputPump, ObserverSeesKeptAndDroppedBytes) {
  Recorder rec;
  const auto p = pump_sh("printf 0123456789", 4, std::chrono::seconds(10), std::nullopt, -1, &rec);
  EXPECT_EQ(p.out.data, "0123");
  EXPECT_EQ(rec.kept_out, "0123");
  EXPECT_EQ(rec.dropped_out, "456789");
}

TEST(OutputPump, DeliversStdinThenEof) {
  std::string big(3 << 20, 'x');  // larger than a pipe buffer: written as the reader reads
  const auto p = pump_sh("wc -c", 1 << 20, std::chrono::seconds(30), big);
  EXPECT_EQ(p.stop.reason, StopReason::kExited);
  EXPECT_EQ(p.out.data, "3145728\n");
}

TEST(OutputPump, ReaderThatIgnoresStdinDoesNotKillUs) {
  // The code exits without reading: our write gets EPIPE, and SIGPIPE must not end the test.
  const auto p =
      pump_sh("exec 0<&-; sleep 0.1", 1 << 20, std::chrono::seconds(10), std::string(4 << 20, 'y'));
  EXPECT_EQ(p.stop.reason, StopReason::kExited);
  EXPECT_EQ(p.info.exit_code(), 0);
}

TEST(OutputPump, StopsAtTheDeadline) {
  const auto start = Clock::now();
  const auto p = pump_sh("echo early; exec sleep 30", 1 << 20, milliseconds(200));
  EXPECT_EQ(p.stop.reason, StopReason::kDeadline);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(p.out.data, "early\n");  // output from before the deadline is kept
}

TEST(OutputPump, StopsOnCancel) {
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    source.cancel();
  });
  const auto start = Clock::now();
  const auto p = pump_sh("exec sleep 30", 1 << 20, std::chrono::seconds(30), std::nullopt,
                         source.token().wait_fd());
  canceller.join();
  EXPECT_EQ(p.stop.reason, StopReason::kCancelled);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace cordon::proc
