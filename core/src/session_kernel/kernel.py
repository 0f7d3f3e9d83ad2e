# cordon's session kernel (issue #41): the persistent python interpreter of a session.
# Stdlib only (Python 3.11). Built into cordon::core (cmake/embed.cmake) and started by
# the backend as the sandbox's main process:
#     python3 -P -c <this source> [--sweep-pidns <host pid namespace inode>]
# -P (Python 3.11) keeps the working directory (the workspace, which the code writes) off
# sys.path while this program imports its own modules; the cells then get it back, so they
# import what a one-shot `python3 -c` would (site-packages, an environment's PYTHONPATH).
# with fd 0 = a SOCK_STREAM unix socket to the host (the control channel) and fd 1/2 =
# the calls' stdout/stderr pipes. Protocol and host side: cordon/session_kernel.h.
#
# Frames both ways: a 4-byte little-endian length, then that many bytes of UTF-8 JSON.
# Call:  {"nonce": n, "language": "python"|..., "code": str, "argv": [str...], "stdin": str?}
# Reply: {"nonce": n, "exit_code": int|null, "signal": int|null, "value": str|null,
#         "error": str|null, "swept": bool}
# fd 1 and 2 are flushed before the reply is written, so once the host has the reply,
# everything the call wrote is in the pipes.
#
# The code runs inside this process: it can change anything here (this loop, the sweep,
# the replies). That reaches only its own session: the host checks every reply's size,
# shape and nonce and treats anything else as a lost interpreter.
import ast
import io
import json
import linecache
import os
import signal
import socket
import struct
import sys
import threading
import traceback

_VALUE_CAP = 64 << 10  # kMaxSessionValueBytes (cordon/session.h)
_ERROR_CAP = 4 << 10


def _setup():
    # The control socket leaves fd 0 for a high close-on-exec fd, so neither the code's
    # input() nor a child process can read or write the host's frames by accident.
    ctl = os.dup(0)
    high = fcntl_dupfd_cloexec(ctl, 1000)
    os.close(ctl)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return socket.socket(fileno=high)


def fcntl_dupfd_cloexec(fd, lowest):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)


def _stat(pid):
    # (state, start time in ticks) of a process, or None once it is gone.
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _others():
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]


def _elders():
    # Processes the init started before this kernel (a session's network relay): no call
    # made them, and they are not the calls' to end. Code cannot make one: every process it
    # starts comes after the kernel, with a higher PID and a later start.
    me = os.getpid()
    born = _stat(me)[1]
    out = set()
    for pid in _others():
        st = _stat(pid)
        if st is not None and pid < me and st[1] <= born:
            out.add(pid)
    return out


def _sweep_sparing(elders, rounds=200):
    # kill(-1) would end the elders too: signal every other process by its PID instead,
    # round after round until none is left (what forks meanwhile is met in the next round;
    # the session's pids limit bounds them). Zombies are dead already: their parent reaps.
    for _ in range(rounds):
        alive = []
        for pid in _others():
            if pid in elders:
                continue
            st = _stat(pid)
            if st is not None and st[0] != b"Z":
                alive.append(pid)
        if not alive:
            return True
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            pass
    return False


def _sweep_allowed(argv):
    # kill(-1) outside a PID namespace of its own would signal every process the user may
    # signal on the host. So the sweep runs only when the host asked for it AND this
    # process is in another PID namespace than the host's (whose inode the host passes).
    if "--sweep-pidns" not in argv:
        return False
    try:
        host_ino = int(argv[argv.index("--sweep-pidns") + 1])
        own_ino = os.stat("/proc/self/ns/pid").st_ino
    except (IndexError, ValueError, OSError):
        return False
    return host_ino != 0 and own_ino != host_ino


def _read_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _read_frame(sock):
    head = _read_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack("<I", head)
    body = _read_exact(sock, size)
    return None if body is None else json.loads(body.decode("utf-8"))


def _write_frame(sock, obj):
    body = json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace")
    sock.sendall(struct.pack("<I", len(body)) + body)


def _cut(text, cap):
    # "replace": a lone surrogate (a __repr__ may return one) is no UTF-8 and would make
    # the whole reply malformed to the host.
    raw = text.encode("utf-8", "replace")
    if len(raw) <= cap:
        return text
    head = raw[:cap].decode("utf-8", "ignore")
    return head + f"\n[cut at {cap} of {len(raw)} bytes]"


class Kernel:
    def __init__(self, sock, sweep):
        self.sock = sock
        self.sweep = sweep
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        self.cells = 0

    def run_python(self, code, stdin):
        # A notebook cell: the statements run in the one namespace; a trailing expression
        # is evaluated apart and its repr is the value.
        self.cells += 1
        name = f"<cell {self.cells}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8", "surrogateescape")))
        value = None
        try:
            tree = ast.parse(code, name, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, "exec"), self.namespace)
            if last is not None:
                result = eval(compile(last, name, "eval"), self.namespace)
                if result is not None:
                    value = _cut(repr(result), _VALUE_CAP)
        except SystemExit:
            # sys.exit() ends the interpreter, as it would a script: the host sees the
            # kernel gone and the call says state_lost.
            raise
        except BaseException as exc:  # noqa: BLE001 - the cell's own error, shown as python shows it
            tb = None if isinstance(exc, SyntaxError) else exc.__traceback__
            if tb is not None and tb.tb_frame.f_code is Kernel.run_python.__code__:
                tb = tb.tb_next  # this frame is the kernel's, not the cell's
            traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
            return {"exit_code": 1, "signal": None, "value": None, "error": None}
        return {"exit_code": 0, "signal": None, "value": value, "error": None}

    def run_child(self, argv, stdin):
        # sh, bash and the rest: a fresh process with the host's argv, on fd 1/2.
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return {"exit_code": 127, "signal": None, "value": None, "error": "no argv"}
        _flush()
        reader = None
        if stdin:
            reader, writer = os.pipe()
        try:
            # SIGPIPE and SIGXFSZ back to their defaults, which python ignores (as
            # subprocess's restore_signals does): `yes | head` ends as in a one-shot call.
            pid = os.posix_spawn(argv[0], argv, os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, reader, 0)] if reader else [],
                                 setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
        except OSError as exc:
            if reader is not None:
                os.close(reader)
                os.close(writer)
            return {"exit_code": 127, "signal": None, "value": None,
                    "error": _cut(f"cannot start {argv[0]}: {exc.strerror}", _ERROR_CAP)}
        feeder = None
        if reader is not None:
            os.close(reader)
            feeder = threading.Thread(target=_feed, args=(writer, stdin.encode("utf-8", "surrogateescape")))
            feeder.start()
        _, status = os.waitpid(pid, 0)
        if feeder is not None:
            feeder.join()
        if os.WIFSIGNALED(status):
            return {"exit_code": None, "signal": os.WTERMSIG(status), "value": None, "error": None}
        return {"exit_code": os.WEXITSTATUS(status), "signal": None, "value": None, "error": None}

    def sweep_others(self):
        # No process of one call lives into the next: every other process of the sandbox
        # is killed before the reply (kill(-1) spares PID 1 and this process). This is the
        # kernel's own step, so code that rewrites the kernel can skip it; that only keeps
        # its own session's processes alive, still inside the session's limits.
        if not self.sweep:
            return False
        elders = _elders()
        if not elders:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif not _sweep_sparing(elders):
            return False
        # Reap our own children (every one is being killed, so the wait ends); orphans are
        # PID 1's. The reply then never names a process that is still there.
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        return True

    def serve(self):
        while True:
            call = _read_frame(self.sock)
            if call is None:
                return
            nonce = call.get("nonce")
            if call.get("language") == "python":
                reply = self.run_python(call.get("code", ""), call.get("stdin"))
            else:
                reply = self.run_child(call.get("argv"), call.get("stdin"))
            swept = self.sweep_others()
            # Ordering contract: fd 1 and 2 are flushed before the reply is written.
            _flush()
            reply["nonce"] = nonce
            reply["swept"] = swept
            _write_frame(self.sock, reply)


def _flush():
    # The code may have closed or replaced sys.stdout/sys.stderr: that is its own output's
    # loss, never the kernel's end.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


def _feed(fd, data):
    try:
        _write_all(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main():
    sweep = _sweep_allowed(sys.argv)
    sock = _setup()
    del sys.argv[1:]
    sys.path.insert(0, "")  # as `python3 -c` has it, for the cells (see -P above)
    Kernel(sock, sweep).serve()


main()
