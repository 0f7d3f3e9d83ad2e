// The session kernel (issue #41): the persistent python interpreter of a session, and the
// host's side of its framing. Backend-agnostic: the namespace and container backends start
// the kernel and drive it through KernelClient.
//
// Starting it: the sandbox's main process is `<python3> -P -c <kernel_source()>`,
// followed by `--sweep-pidns <inode>` (kernel_argv()) when it runs in a PID namespace of its
// own; fd 0 = the sandbox's end of a SOCK_STREAM unix socket pair (the control channel),
// fd 1/2 = the calls' stdout/stderr pipes. The kernel moves the socket to a high
// close-on-exec fd and puts /dev/null on fd 0. Its source is core/src/session_kernel/
// kernel.py, built in (cmake/embed.cmake).
//
// Frames both ways: a 4-byte little-endian length, then that many bytes of records, each
// a tag byte (KernelTag), a 4-byte little-endian length and that many bytes.
//   call  N nonce (8 bytes LE), L language, C code, A argv (one record per element), I stdin
//   reply N nonce (echoed), X exit code | S signal (4 bytes LE), V value, E error, W swept
// Not JSON: the kernel would have to import `json` (and `re` under it), a megabyte of every
// idle session's memory and a few microseconds of every call (issue #41's targets).
// python: the code is a notebook cell in one namespace kept across calls; a trailing
// expression's repr (not None) is the value, cut at kMaxSessionValueBytes and marked; an
// exception prints its traceback on fd 2 and the call exits 1, the kernel lives on.
// sys.exit() and os._exit() end the kernel: the host sees it gone (EOF) and the call is
// state_lost. Any other language: the kernel runs `argv` (chosen by the host, code and all)
// as a fresh child on fd 1/2 and replies with its exit code or signal.
//
// After every call, before replying, the kernel kills every other process of the sandbox
// (kill(-1, SIGKILL): all but PID 1 and itself) so nothing of one call lives into the next;
// only when started with --sweep-pidns and its PID namespace differs from the host's (never
// on the host's own processes). It is the kernel's own step: code can skip it, which
// affects only its own session. The reply's `swept` says whether it ran.
//
// Ordering rule for the backend: the kernel flushes fd 1/2 before it writes the reply, so
// once KernelClient::call returns kReply, everything the call wrote is already in the
// pipes: drain them without blocking (the backend's OutputPump). The pipes must also be
// drained WHILE call() waits (call()'s `output`): a call that writes more than a pipe holds
// blocks the kernel at its flush, and without a reader it would only end at the deadline.
// Sizes from the kernel are trusted only within kMaxKernelReplyBytes and the checks of
// KernelReplyParser; anything else is a protocol error and the interpreter is lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/cancel.h"
#include "cordon/error.h"
#include "cordon/proc/output_pump.h"
#include "cordon/unique_fd.h"

namespace cordon {

// The value's largest size in a reply: kMaxSessionValueBytes plus the cut marker.
inline constexpr std::size_t kMaxKernelValueBytes = (64U << 10) + 64;
inline constexpr std::size_t kMaxKernelErrorBytes = (4U << 10) + 64;
// A reply frame's largest body: the value, the error, and the small fields with their
// record heads.
inline constexpr std::size_t kMaxKernelReplyBytes =
    kMaxKernelValueBytes + kMaxKernelErrorBytes + 256;

// A record's tag in a frame (the kernel's side: kernel.py).
enum class KernelTag : char {
  kNonce = 'N',
  kLanguage = 'L',
  kCode = 'C',
  kArg = 'A',
  kStdin = 'I',
  kExitCode = 'X',
  kSignal = 'S',
  kValue = 'V',
  kError = 'E',
  kSwept = 'W',
};

// The kernel program's python source (core/src/session_kernel/kernel.py).
[[nodiscard]] std::string_view kernel_source();
// The kernel's argv: {python, "-P", "-c", source} plus, when host_pidns_inode is
// set (the inode of the host's /proc/self/ns/pid), "--sweep-pidns", "<inode>".
[[nodiscard]] std::vector<std::string> kernel_argv(const std::string& python,
                                                   std::optional<std::uint64_t> host_pidns_inode);

struct KernelCall {
  std::string language;           // "python" keeps state; anything else runs argv
  std::string code;               // python: the cell
  std::vector<std::string> argv;  // not python: the whole command line, code included
  std::optional<std::string> stdin_data;
};

struct KernelReply {
  std::uint64_t nonce = 0;
  std::optional<int> exit_code;      // 0..255; exactly one of exit_code and signal is set
  std::optional<int> signal;         // 1..64
  std::optional<std::string> value;  // python: the trailing expression's repr
  std::optional<std::string> error;  // the kernel's own failure (e.g. argv[0] not found)
  bool swept = false;                // the kill(-1) step ran
};

// One call frame: the length prefix and the records.
[[nodiscard]] std::string encode_kernel_call(const KernelCall& call, std::uint64_t nonce);

// Reads one reply frame incrementally. Never buffers more than the frame's announced
// length, and refuses a length over the bound before buffering anything.
class KernelReplyParser {
 public:
  enum class State { kNeedMore, kDone, kError };
  explicit KernelReplyParser(std::uint64_t expected_nonce,
                             std::size_t max_bytes = kMaxKernelReplyBytes);
  // Takes bytes of the stream. Bytes past the end of the frame are an error (the kernel
  // says nothing unasked); feeding after kDone or kError changes nothing.
  State feed(std::string_view bytes);
  // How many bytes the frame still needs (a reader asks for no more, so it never reads
  // into what follows).
  [[nodiscard]] std::size_t wanted() const;
  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] const KernelReply& reply() const { return reply_; }  // when kDone
  [[nodiscard]] const std::string& error() const { return error_; }  // when kError

 private:
  State fail(std::string message);
  State finish();

  std::uint64_t expected_nonce_;
  std::size_t max_bytes_;
  State state_ = State::kNeedMore;
  std::string header_;
  std::optional<std::size_t> length_;
  std::string body_;
  KernelReply reply_;
  std::string error_;
};

enum class KernelOutcome {
  kReply,          // a well-formed reply to this call
  kGone,           // the kernel closed the channel (it died, or the code ended it)
  kProtocolError,  // oversized, malformed, wrong nonce, or a failed write
  kDeadline,       // the host's clock passed the deadline
  kCancelled,      // the cancel token fired
};

struct KernelCallResult {
  KernelOutcome outcome = KernelOutcome::kGone;
  KernelReply reply;   // when kReply
  std::string detail;  // why, for the other outcomes
  Status output;       // reading the output pipes failed (they were then left unread)
};

// The host's end of one kernel's control socket. After any outcome but kReply the kernel is
// to be treated as lost (kill it, start another with a new client); this client then fails
// every later call as kGone without touching the socket.
class KernelClient {
 public:
  explicit KernelClient(UniqueFd control);
  // Sends the call and waits for its reply until `deadline` (steady clock) or `cancel`.
  // `output`, when given, holds the kernel's stdout/stderr pipes: they are read whenever
  // they have data while the client waits, in the same poll (no thread of their own: a
  // thread started and joined per call cost a warm call as much as the kernel's work).
  [[nodiscard]] KernelCallResult call(const KernelCall& call,
                                      std::chrono::steady_clock::time_point deadline,
                                      const CancelToken& cancel,
                                      proc::OutputPump* output = nullptr);
  [[nodiscard]] bool lost() const { return lost_; }
  [[nodiscard]] int fd() const { return control_.get(); }

 private:
  UniqueFd control_;
  std::uint64_t next_nonce_;
  bool lost_ = false;
};

}  // namespace cordon
