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
# Frames both ways: a 4-byte little-endian length, then that many bytes of records, each
# a tag byte, a 4-byte little-endian length and that many bytes (no JSON: its import, and
# `re` under it, would cost every idle session a megabyte and every call a few us).
# Call:  N nonce (8 bytes, echoed), L language, C code (UTF-8), A one argv element (in
#        order, repeated), I stdin (bytes)
# Reply: N nonce, X exit code or S signal (4 bytes, little-endian), V value (UTF-8),
#        E error (UTF-8), W swept (1 byte: 0 or 1)
# fd 1 and 2 are flushed before the reply is written, so once the host has the reply,
# everything the call wrote is in the pipes.
#
# The code runs inside this process: it can change anything here (this loop, the sweep,
# the replies). That reaches only its own session: the host checks every reply's size,
# shape and nonce and treats anything else as a lost interpreter.
#
# What this program imports is what an idle session costs on the host: only modules
# python has loaded at start anyway, and C modules (_ast, _signal, fcntl). threading (a
# child's stdin), traceback and linecache (a cell's error) are imported when first needed.
import _ast
import io
import os
import sys
from _signal import SIGKILL, SIGPIPE, SIGXFSZ

_VALUE_CAP = 64 << 10  # kMaxSessionValueBytes (cordon/session.h)
_ERROR_CAP = 4 << 10


def _setup():
    # The control socket leaves fd 0 for a high close-on-exec fd, so neither the code's
    # input() nor a child process can read or write the host's frames by accident.
    import fcntl
    high = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 1000)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return high


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
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            pass
    return False


def _sweep_allowed(argv):
    # kill(-1) outside a PID namespace of its own would signal every other process the user
    # may signal on the host. So the sweep runs only when the host asked for it AND this
    # process is in another PID namespace than the host's (whose inode the host passes).
    if "--sweep-pidns" not in argv:
        return False
    try:
        host_ino = int(argv[argv.index("--sweep-pidns") + 1])
        own_ino = os.stat("/proc/self/ns/pid").st_ino
    except (IndexError, ValueError, OSError):
        return False
    return host_ino != 0 and own_ino != host_ino


def _u32(data, at):
    return int.from_bytes(data[at:at + 4], "little")


def _records(body):
    # A frame's records as (tag, bytes), in order. A malformed frame (the host's; nothing
    # else writes here) raises, which ends the kernel: the host sees it gone.
    out = []
    at = 0
    while at < len(body):
        size = _u32(body, at + 1)
        if at + 5 + size > len(body):
            raise ValueError("a record runs past its frame")
        out.append((body[at], body[at + 5:at + 5 + size]))
        at += 5 + size
    return out


class _Channel:
    # The host's end of the control socket, read and written with plain syscalls (the
    # socket module is not imported).
    def __init__(self, fd):
        self.fd = fd
        self.pending = b""

    def read_frame(self):
        # The records of the next call frame, or None when the host closed the channel.
        while True:
            if len(self.pending) >= 4:
                size = _u32(self.pending, 0)
                if len(self.pending) >= 4 + size:
                    body = self.pending[4:4 + size]
                    self.pending = self.pending[4 + size:]
                    return _records(body)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk

    def write_frame(self, records):
        body = b"".join(bytes((tag,)) + len(data).to_bytes(4, "little") + data
                        for tag, data in records)
        _write_all(self.fd, len(body).to_bytes(4, "little") + body)


def _cut(text, cap):
    # UTF-8 of `text`, at most `cap` bytes of it and a mark when cut. "replace": a lone
    # surrogate (a __repr__ may return one) is no UTF-8, which the host refuses.
    raw = text.encode("utf-8", "replace")
    if len(raw) <= cap:
        return raw
    head = raw[:cap].decode("utf-8", "ignore").encode("utf-8")
    return head + f"\n[cut at {cap} of {len(raw)} bytes]".encode()


def _status(exit_code=None, signal=None, value=None, error=None):
    out = []
    if signal is not None:
        out.append((ord("S"), signal.to_bytes(4, "little")))
    else:
        out.append((ord("X"), exit_code.to_bytes(4, "little")))
    if value is not None:
        out.append((ord("V"), value))
    if error is not None:
        out.append((ord("E"), _cut(error, _ERROR_CAP)))
    return out


class Kernel:
    def __init__(self, channel, sweep):
        self.channel = channel
        self.sweep = sweep
        # The init's processes from before this kernel (a relay), once: no call can add one.
        self.elders = _elders() if sweep else set()
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        self.cells = []  # every cell's source, for tracebacks (linecache, once loaded)
        self.cached = 0  # how many of them linecache has
        self.no_stdin = io.TextIOWrapper(io.BytesIO())

    def _cache_cells(self):
        # Tracebacks show a cell's lines through linecache; it is loaded by the first error
        # (or by the code): the cells so far go in then, and every later one before it runs.
        linecache = sys.modules.get("linecache")
        if linecache is None:
            return
        while self.cached < len(self.cells):
            self.cached += 1
            name = f"<cell {self.cached}>"
            code = self.cells[self.cached - 1]
            linecache.cache[name] = (len(code), None, code.splitlines(True), name)

    def run_python(self, code, stdin):
        # A notebook cell: the statements run in the one namespace; a trailing expression
        # is evaluated apart and its repr is the value. _ast and compile() are what the
        # `ast` module wraps, without its import. An empty cell (the host's readiness probe
        # when a session opens) runs nothing and is no cell: the code's first is <cell 1>.
        if not code:
            return _status(exit_code=0)
        self.cells.append(code)
        name = f"<cell {len(self.cells)}>"
        self._cache_cells()
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin)) if stdin else self.no_stdin
        value = None
        try:
            tree = compile(code, name, "exec", _ast.PyCF_ONLY_AST)
            last = None
            if tree.body and type(tree.body[-1]) is _ast.Expr:
                last = _ast.Expression(tree.body.pop().value)
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
            import linecache  # noqa: F401 - loaded for _cache_cells
            import traceback
            self._cache_cells()
            traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
            return _status(exit_code=1)
        return _status(exit_code=0, value=value)

    def run_child(self, argv, stdin):
        # sh, bash and the rest: a fresh process with the host's argv, on fd 1/2.
        if not argv:
            return _status(exit_code=127, error="no argv")
        _flush()
        reader = None
        if stdin:
            reader, writer = os.pipe()
        try:
            # SIGPIPE and SIGXFSZ back to their defaults, which python ignores (as
            # subprocess's restore_signals does): `yes | head` ends as in a one-shot call.
            pid = os.posix_spawn(argv[0], argv, os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, reader, 0)] if reader else [],
                                 setsigdef=(SIGPIPE, SIGXFSZ))
        except OSError as exc:
            if reader is not None:
                os.close(reader)
                os.close(writer)
            return _status(exit_code=127, error=f"cannot start {argv[0]}: {exc.strerror}")
        feeder = None
        if reader is not None:
            import threading
            os.close(reader)
            feeder = threading.Thread(target=_feed, args=(writer, stdin))
            feeder.start()
        _, status = os.waitpid(pid, 0)
        if feeder is not None:
            feeder.join()
        if os.WIFSIGNALED(status):
            return _status(signal=os.WTERMSIG(status))
        return _status(exit_code=os.WEXITSTATUS(status))

    def sweep_others(self):
        # No process of one call lives into the next: every other process of the sandbox
        # is killed before the reply (kill(-1) spares PID 1 and this process). This is the
        # kernel's own step, so code that rewrites the kernel can skip it; that only keeps
        # its own session's processes alive, still inside the session's limits.
        if not self.sweep:
            return False
        if not self.elders:
            try:
                os.kill(-1, SIGKILL)
            except ProcessLookupError:
                pass
        elif not _sweep_sparing(self.elders):
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
            records = self.channel.read_frame()
            if records is None:
                return
            call = {}
            argv = []
            for tag, data in records:
                if tag == ord("A"):
                    # The host's bytes as they are (surrogateescape), as a one-shot argv.
                    argv.append(data.decode("utf-8", "surrogateescape"))
                else:
                    call[tag] = data
            stdin = call.get(ord("I"), b"")
            if call.get(ord("L")) == b"python":
                code = call.get(ord("C"), b"").decode("utf-8", "replace")
                reply = self.run_python(code, stdin)
            else:
                reply = self.run_child(argv, stdin)
            swept = self.sweep_others()
            # Ordering contract: fd 1 and 2 are flushed before the reply is written.
            _flush()
            reply.append((ord("N"), call.get(ord("N"), b"")))
            reply.append((ord("W"), b"\x01" if swept else b"\x00"))
            self.channel.write_frame(reply)


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
    channel = _Channel(_setup())
    del sys.argv[1:]
    sys.path.insert(0, "")  # as `python3 -c` has it, for the cells (see -P above)
    Kernel(channel, sweep).serve()


main()
