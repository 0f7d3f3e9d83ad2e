#!/usr/bin/python3
"""Crash safety of cordon (issue #13): SIGKILL at random points, host-side faults, and the
history database under concurrent writers.

  crash_test.py kill --cordon BIN --backend namespace|container [--runtime runsc] --kills N [--seed S]
      `cordon run` and `cordon mcp` (a warm pool, size 2) are SIGKILLed N times at random
      points: while the process starts and sweeps, while it builds a sandbox, mid-run,
      while it tears down, with its pool full, while it records the history. After each
      kill no process of the code may survive (the code carries a marker in its
      environment; any process left in a cgroup of the dead cordon counts too), and after
      the next start that is not killed nothing of any dead cordon may remain: cgroups in
      every hierarchy, run directories, bundles, lock and uid-slot files, runc state,
      mounts. The history database written by the killed runs must pass integrity_check.
      Both backends hold sessions (the container backend under runc and runsc too): every
      third kill is a `cordon session` holder (issue #41), idle or mid-call, and a backend
      that refuses the session fails the test. The holder's sandbox goes with it (for a
      container session: its container, runc state, cgroups, bundle and mounts, all named
      for the holder's pid and judged as the rest), and the next session call removes its
      socket. On namespace, a `cordon mcp` with python started ahead also keeps sessions built
      ahead: the first server killed has handed one out (session_open), and it, like those
      still in the pool, must go with the server.
      With --runtime (the container backend's OCI runtime, e.g. gVisor's runsc) the code
      runs inside a user-space kernel, where no host process carries its marker: what must
      not survive there is every host process of the runtime's (its sandbox, gofer and
      foreground run name the runtime dir) besides those in a dead cordon's cgroup.

  crash_test.py writers --cordon BIN --per-writer N
      4 writer processes into one history database at once: `cordon run` CLIs, a `cordon
      mcp` server, and the HistoryStore used directly (history_writer_tool, as the
      inspector uses it); every record must be there afterwards.

  crash_test.py faults --cordon BIN
      Host-side faults (each simulated: never the host's own database, disk or /dev/shm).

Exit 0 when everything holds; 1 with each failure printed otherwise.
"""

import argparse
import ctypes
import json
import os
import random
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

FAILURES = []
# The backends that hold sessions (issue #41): their kill test kills session holders too.
SESSION_BACKENDS = ("namespace", "container")


def fail(message):
    FAILURES.append(message)
    print("FAIL: " + message, flush=True)


# ---------------------------------------------------------------- host snapshots


def read(path, mode="rb"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return b"" if "b" in mode else ""


def live_processes():
    """(pid, comm, environ bytes, cgroup text) of every non-zombie process but us."""
    me = os.getpid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        stat = read("/proc/%s/stat" % name, "r")
        close = stat.rfind(")")
        if close < 0 or close + 2 >= len(stat) or stat[close + 2] == "Z":
            continue
        comm = stat[stat.find("(") + 1:close]
        out.append((int(name), comm, read("/proc/%s/environ" % name), read("/proc/%s/cgroup" % name, "r")))
    return out


def alive(pid):
    """Exists and is not a zombie (owner.h's pid_alive): a dead cordon's pid can be taken
    by a new process (pid_max is 32768 here), whose objects are not leftovers."""
    stat = read("/proc/%d/stat" % pid, "r")
    close = stat.rfind(")")
    return close > 0 and close + 2 < len(stat) and stat[close + 2] != "Z"


def owned_names(pid):
    """The name prefixes of every host object a cordon of this pid makes (owner.h)."""
    return ["cordon-%d-" % pid, "cordon-run-%d-" % pid, "cordon-oci-%d-" % pid]


def survivors(mark, dead_pids, runtime_dir=None):
    """Processes of the code (marked) or left in a cgroup of a dead cordon; with
    `runtime_dir`, also every process naming it (a user-space kernel's sandbox)."""
    found = []
    needles = [n for pid in dead_pids if not alive(pid) for n in owned_names(pid)]
    for pid, comm, environ, cgroup in live_processes():
        marked = mark.encode() in environ
        in_dead_group = any("/" + n in cgroup for n in needles)
        runtimes = runtime_dir is not None and runtime_dir.encode() in read("/proc/%d/cmdline" % pid)
        if marked or in_dead_group or runtimes:
            found.append("%d %s%s" % (pid, comm, " (marked)" if marked else
                                      " (in a dead cordon's cgroup)" if in_dead_group else
                                      " (the runtime's)"))
    return found


def wait_no_survivors(mark, dead_pids, runtime_dir=None, seconds=5.0):
    deadline = time.monotonic() + seconds
    while True:
        left = survivors(mark, dead_pids, runtime_dir)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def walk_cgroups(root="/sys/fs/cgroup", depth=0):
    if depth > 8:
        return
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for e in entries:
        try:
            if not e.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        yield e.path
        yield from walk_cgroups(e.path, depth + 1)


def leftovers(dead_pids, dirs, runtime_dir):
    """Every host object of a dead cordon still present."""
    found = []
    dead_pids = [pid for pid in dead_pids if not alive(pid)]
    prefixes = [n for pid in dead_pids for n in owned_names(pid)]
    instance_prefixes = ["%d-" % pid for pid in dead_pids]
    for path in walk_cgroups():
        if any(os.path.basename(path).startswith(p) for p in prefixes):
            found.append("cgroup " + path)
    for d in dirs:
        for name in os.listdir(d) if os.path.isdir(d) else []:
            if any(name.startswith(p) for p in prefixes):
                found.append("dir " + os.path.join(d, name))
    oci = os.path.join(runtime_dir, "oci")
    for sub in ("bundles", "locks", "state"):
        d = os.path.join(oci, sub)
        for name in os.listdir(d) if os.path.isdir(d) else []:
            bare = name[len("cordon-oci-"):] if name.startswith("cordon-oci-") else name
            if any(bare.startswith(p) for p in instance_prefixes):
                found.append("%s %s" % (sub, os.path.join(d, name)))
    # A uid slot file nobody holds is a leftover (uid_slot.h: unlinked while held).
    import fcntl

    for name in os.listdir(runtime_dir) if os.path.isdir(runtime_dir) else []:
        if name.startswith("uid-slot-"):
            path = os.path.join(runtime_dir, name)
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                found.append("uid slot " + path)
            except OSError:
                pass
            finally:
                os.close(fd)
    # Helpers a killed cordon started (runc with --root in this test's runtime dir).
    for pid, comm, _, _ in live_processes():
        if runtime_dir.encode() in read("/proc/%d/cmdline" % pid):
            found.append("process %d %s" % (pid, comm))
    for line in read("/proc/self/mountinfo", "r").splitlines():
        fields = line.split()
        mount_point = fields[4] if len(fields) > 4 else ""
        if mount_point.startswith(oci + "/") and any("/%s" % p in mount_point for p in instance_prefixes):
            found.append("mount " + mount_point)
        if any(p in mount_point for p in prefixes):
            found.append("mount " + mount_point)
    return found


# ---------------------------------------------------------------- environment


def base_env(args, work):
    env = dict(os.environ)
    env["CORDON_RUNTIME_DIR"] = os.path.join(work, "runtime")
    env["CORDON_RUN_DIR"] = os.path.join(work, "run")
    env["CORDON_HISTORY_PATH"] = os.path.join(work, "history.sqlite3")
    # The code's marker is set by the code itself (export): nothing of the test's own
    # environment may carry it, or the test would find itself.
    for k in ("CRASH_MARK",):
        env.pop(k, None)
    os.makedirs(env["CORDON_RUNTIME_DIR"], exist_ok=True)
    os.makedirs(env["CORDON_RUN_DIR"], exist_ok=True)
    return env


def kill_and_reap(proc):
    try:
        proc.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


# ---------------------------------------------------------------- kill


def code_of(mark, rng):
    """Code whose processes carry `mark`; with a background process that the teardown
    must kill, and a short or long foreground."""
    fg, seconds = rng.choice([("true", 0.0), ("sleep 0.05", 0.05), ("sleep 0.3", 0.3),
                              ("sleep 1000", 0.5)])
    return "export CRASH_MARK=%s; sleep 1000 & %s; echo done" % (mark, fg), seconds


def backend_args(args, backend=None):
    """-b BACKEND, and the container backend's runtime when one was given."""
    out = ["-b", backend or args.backend]
    if getattr(args, "runtime", "") and (backend or args.backend) == "container":
        out += ["--runtime", args.runtime]
    return out


def cli_once(args, env, mark, rng, overhead):
    code, seconds = code_of(mark, rng)
    timeout = "0.5s" if seconds == 0.5 else "20s"
    cmd = [args.cordon, "run", *backend_args(args), "-t", timeout, "-c", code]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # Anywhere from its start to a little past its expected end: set-up, the sweep, the
    # run, the teardown, the history record.
    time.sleep(rng.uniform(0, (overhead + seconds) * 1.1))
    phase = "cli alive" if proc.poll() is None else "cli already ended"
    kill_and_reap(proc)
    return proc.pid, phase


class Mcp:
    def __init__(self, args, env, pool, backend=None, extra=()):
        cmd = [args.cordon, "mcp", *backend_args(args, backend), "--no-audit", "--unverified",
               "-t", "20s", "--pool-size", str(pool), *extra]
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.buf = b""

    def send(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def line(self, seconds):
        deadline = time.monotonic() + seconds
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def initialize(self):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "crash-test", "version": "1"}}})
        begin = time.monotonic()
        reply = self.line(30)
        if time.monotonic() - begin > 3:
            print("note: mcp %d took %.1f s to answer initialize"
                  % (self.proc.pid, time.monotonic() - begin), flush=True)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply is not None

    def tool(self, call_id, name, arguments):
        self.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})

    def call(self, call_id, code, language="bash"):
        self.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                   "params": {"name": "run_code", "arguments": {"code": code, "language": language, "timeout": None,
                                                            "files": None, "collect": None}}})


def mcp_once(args, env, mark, rng, overhead, pooled_session=False):
    # Namespace pools may hold python started ahead (NamespaceOptions::prestart_python).
    prestart = pooled_session or (args.backend == "namespace" and rng.random() < 0.3)
    mcp = Mcp(args, env, pool=2, extra=["--prestart", "python"] if prestart else [])
    phases = ["start", "pool-full", "call", "call", "second-call"]
    if prestart:
        # With python started ahead the backend keeps sessions built ahead too (their kernels
        # running): one handed out by session_open, and those still in the pool, die with it.
        phases.append("pooled-session")
    phase = "pooled-session" if pooled_session else rng.choice(phases)
    try:
        if phase == "start":
            time.sleep(rng.uniform(0, 0.3))
        else:
            if not mcp.initialize():
                fail("mcp %d did not answer initialize" % mcp.proc.pid)
            if phase == "pool-full":
                time.sleep(rng.uniform(0.2, 1.0))
            elif phase == "pooled-session":
                time.sleep(rng.uniform(0.2, 1.0))  # the session pool fills meanwhile
                mcp.tool(1, "session_open", {"language": "python"})
                reply = mcp.line(30)
                if reply is None or reply.get("result", {}).get("isError", True):
                    fail("mcp %d: session_open failed: %r" % (mcp.proc.pid, reply))
                time.sleep(rng.uniform(0, 0.2))
            else:
                code, seconds = code_of(mark, rng)
                if phase == "second-call":
                    mcp.call(1, "export CRASH_MARK=%s; echo first" % mark)
                    reply = mcp.line(30)
                    if reply is None or reply.get("result", {}).get("isError", True):
                        fail("mcp %d: the first call failed: %r" % (mcp.proc.pid, reply))
                mcp.call(2, code)
                time.sleep(rng.uniform(0, (overhead + seconds) * 1.1))
    except (BrokenPipeError, ValueError):
        pass
    pid = mcp.proc.pid
    kill_and_reap(mcp.proc)
    return pid, "mcp " + phase


def session_start(args, env):
    """`cordon session start`: (id, its holder's pid), or (None, why)."""
    started = subprocess.run([args.cordon, "session", "start", *backend_args(args), "-l", "sh",
                              "-t", "20s"], env=env, capture_output=True, timeout=120, check=False)
    if started.returncode != 0:
        return None, started.stderr.decode(errors="replace").strip()
    sid = started.stdout.decode().split("\n")[0].strip()
    listed = subprocess.run([args.cordon, "session", "ls", "--json"], env=env,
                            capture_output=True, timeout=60, check=False)
    for s in json.loads(listed.stdout or b"{}").get("sessions", []):
        if s.get("id") == sid:
            return sid, s["pid"]
    return None, "session %s is not listed: %r" % (sid, listed.stderr[-300:])


def session_once(args, env, mark, rng, overhead):
    """A session's holder (issue #41) SIGKILLed while idle or mid-call: its sandbox must go
    with it, and the next start sweeps what it left."""
    sid, pid = session_start(args, env)
    if sid is None:
        fail("cordon session start failed: %s" % pid)
        return None, "session start failed"
    phase = rng.choice(["session idle", "session call", "session call"])
    call = None
    if phase == "session call":
        code, seconds = code_of(mark, rng)
        call = subprocess.Popen([args.cordon, "session", "run", sid, "-c", code], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, (overhead + seconds) * 1.1))
    os.kill(pid, signal.SIGKILL)
    # The holder is this test's child (a subreaper: PID 1 here never reaps).
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    if call is not None:
        try:
            call.wait(timeout=60)
        except subprocess.TimeoutExpired:
            fail("session %s: the call's client still waits after its holder died" % sid)
            kill_and_reap(call)
    return pid, phase


def calibrate(args, env):
    """What one whole `cordon run` adds to its code's own time here, now."""
    best = None
    for _ in range(3):
        begin = time.monotonic()
        subprocess.run([args.cordon, "run", *backend_args(args), "-t", "20s", "-c", "true"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        took = time.monotonic() - begin
        best = took if best is None else min(best, took)
    return best


def command_kill(args):
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="crash-kill-")
    env = base_env(args, work)
    runtime_dir = env["CORDON_RUNTIME_DIR"]
    dirs = [env["CORDON_RUN_DIR"], "/tmp", "/dev/shm"]
    whole = calibrate(args, env)
    what = args.backend + (" (%s)" % args.runtime if args.runtime else "")
    print("kill: backend %s, %d kills, seed %s, a whole run takes %.0f ms"
          % (what, args.kills, args.seed, whole * 1000), flush=True)
    watch = runtime_dir if args.runtime else None
    # Session holders are grandchildren (`session start` forks them): adopted and reaped
    # here.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    env["XDG_RUNTIME_DIR"] = os.path.join(work, "xdg")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    sid, why = session_start(args, env)
    sessions = sid is not None
    if sessions:
        subprocess.run([args.cordon, "session", "stop", sid], env=env, capture_output=True,
                       timeout=60, check=False)
        os.waitpid(why, 0)
    elif args.backend in SESSION_BACKENDS:
        # Both hold sessions (the container backend under runc and runsc): a refusal is a
        # failure, never a run without session kills.
        fail("backend %s holds sessions, but cordon session start failed: %s" % (what, why))
    else:
        print("kill: no session kills: %s" % why, flush=True)
    dead = []
    phases = {}
    begin = time.monotonic()
    for i in range(args.kills):
        mark = "crash-%d-%d" % (os.getpid(), i)
        turn = i % (3 if sessions else 2)
        if turn == 0:
            pid, phase = cli_once(args, env, mark, rng, whole)
        elif turn == 1:
            # On namespace, the first server killed holds a session from its session pool.
            pid, phase = mcp_once(args, env, mark, rng, whole,
                                  pooled_session=args.backend == "namespace" and
                                  "mcp pooled-session" not in phases)
        else:
            pid, phase = session_once(args, env, mark, rng, whole)
            if pid is None:
                continue
        dead.append(pid)
        phases[phase] = phases.get(phase, 0) + 1
        left = wait_no_survivors(mark, [pid], watch, 10.0 if watch else 5.0)
        if left:
            fail("kill %d (%s, pid %d): processes survive: %s" % (i, phase, pid, "; ".join(left)))
    if sessions and not any(p.startswith("session") for p in phases):
        fail("no session holder was killed in %d kills" % args.kills)
    # The next start that is not killed sweeps what every dead cordon left.
    before_sweep = leftovers(dead, dirs, runtime_dir)
    done = subprocess.run([args.cordon, "run", *backend_args(args), "-t", "20s", "-c", "echo swept"],
                          env=env, capture_output=True, check=False)
    if done.returncode != 0 or b"swept" not in done.stdout:
        fail("the run after the kills failed: %r %r" % (done.returncode, done.stderr[-500:]))
    left = leftovers(dead, dirs, runtime_dir)
    for item in left:
        fail("after the next start, left by a killed cordon: " + item)
    # The next `cordon session` call sweeps the sockets of killed holders.
    if sessions:
        subprocess.run([args.cordon, "session", "ls"], env=env, capture_output=True,
                       timeout=60, check=False)
        sockets = os.path.join(env["XDG_RUNTIME_DIR"], "cordon-sessions")
        for name in sorted(os.listdir(sockets)) if os.path.isdir(sockets) else []:
            if name.endswith(".sock"):
                fail("after the next session call, a killed holder's socket is left: " + name)
    # The history written by killed runs is intact.
    try:
        db = sqlite3.connect(env["CORDON_HISTORY_PATH"], timeout=10)
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        rows = db.execute("SELECT count(*) FROM runs").fetchone()[0]
        db.close()
        if check != "ok":
            fail("history database after the kills: " + check)
    except sqlite3.Error as e:
        fail("history database after the kills: %s" % e)
        rows = -1
    print("kill: backend %s: %d kills in %.1f s (%s); %d runs recorded; %d host objects of"
          " dead cordons before the last start, %d failures"
          % (what, args.kills, time.monotonic() - begin,
             ", ".join("%s %d" % kv for kv in sorted(phases.items())), rows, len(before_sweep),
             len(FAILURES)),
          flush=True)
    if not FAILURES:
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- writers


def history_writer_tool():
    tool = os.environ.get("CORDON_TEST_HISTORY_WRITER", "")
    if not tool or not os.path.exists(tool):
        fail("history_writer_tool not found (CORDON_TEST_HISTORY_WRITER=%r)" % tool)
        return None
    return tool


def mcp_writer(args, env, count, tag):
    """A `cordon mcp` server recording `count` calls; returns how many answered."""
    mcp = Mcp(args, env, pool=0, backend="subprocess", extra=["--allow-unisolated"])
    answered = 0
    try:
        mcp.initialize()
        # A few calls in flight at a time, as a client with parallel tool calls would.
        next_id, in_flight = 0, 0
        while answered < count:
            while next_id < count and in_flight < 4:
                mcp.call(next_id, "%s-%d" % (tag, next_id), language="sh")
                next_id += 1
                in_flight += 1
            reply = mcp.line(60)
            if reply is None:
                fail("mcp writer: no answer after %d calls" % answered)
                break
            if "id" in reply:
                in_flight -= 1
                answered += 1
        mcp.proc.stdin.close()  # end of input: the server stores what is queued and exits
        mcp.proc.wait(60)
    finally:
        if mcp.proc.poll() is None:
            kill_and_reap(mcp.proc)
    if mcp.proc.returncode != 0:
        fail("mcp writer exited with %r" % mcp.proc.returncode)
    return answered


def cli_writer(args, env, count, tag):
    bad = 0
    for i in range(count):
        done = subprocess.run([args.cordon, "run", "-b", "subprocess", "--allow-unisolated",
                               "-c", "%s-%d" % (tag, i)], env=env, capture_output=True, check=False)
        if b"not recorded" in done.stderr:
            bad += 1
            if bad <= 3:
                fail("cli writer: %s" % done.stderr.decode(errors="replace").strip())
    return bad


def command_writers(args):
    tool = history_writer_tool()
    if tool is None:
        return
    work = tempfile.mkdtemp(prefix="crash-writers-")
    env = base_env(args, work)
    db_path = env["CORDON_HISTORY_PATH"]
    n = args.per_writer
    # Every record's code is "<tag>-<i>": `cordon run` runs it as sh code (a command not
    # found is a failed run, recorded all the same), so it is its own unique name.
    tags = ["w-cli", "w-mcp", "w-once", "w-held"]
    begin = time.monotonic()
    import threading

    results = {}
    procs = [
        subprocess.Popen([tool, db_path, str(n), tags[2], "once"], env=env, stderr=subprocess.PIPE),
        subprocess.Popen([tool, db_path, str(n), tags[3], "held"], env=env, stderr=subprocess.PIPE),
    ]
    threads = [
        threading.Thread(target=lambda: results.__setitem__("cli", cli_writer(args, env, n, tags[0]))),
        threading.Thread(target=lambda: results.__setitem__("mcp", mcp_writer(args, env, n, tags[1]))),
    ]
    for t in threads:
        t.start()
    for p, tag in zip(procs, tags[2:]):
        _, err = p.communicate()
        if p.returncode != 0:
            fail("%s writer exited %d: %s" % (tag, p.returncode, err.decode(errors="replace")[-2000:]))
    for t in threads:
        t.join()
    took = time.monotonic() - begin
    db = sqlite3.connect(db_path, timeout=30)
    total = 0
    for tag in tags:
        codes = {row[0] for row in db.execute("SELECT code FROM runs WHERE code LIKE ?", (tag + "-%",))}
        missing = [i for i in range(n) if "%s-%d" % (tag, i) not in codes]
        total += len(codes)
        if missing:
            fail("writer %s: %d of %d records lost (first: %s)" % (tag, len(missing), n, missing[:5]))
    check = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    if check != "ok":
        fail("history database: " + check)
    print("writers: 4 writers x %d records in %.1f s: %d stored, %d expected; integrity %s"
          % (n, took, total, 4 * n, check), flush=True)
    if not FAILURES:
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- faults

RESULT_CODE = "echo out; exit 3"  # a run whose result is checked: stdout "out", exit 3


def run_cli(args, env, backend="namespace", code=RESULT_CODE, extra=()):
    return subprocess.run([args.cordon, "run", "-b", backend, *extra, "-c", code], env=env,
                          capture_output=True, timeout=180, check=False)


def expect_result(what, done, rc=3, out=b"out\n"):
    if done.returncode != rc or done.stdout != out:
        fail("%s: the run's result was not delivered: exit %d, stdout %r, stderr %r"
             % (what, done.returncode, done.stdout[-300:], done.stderr[-500:]))


def expect_message(what, done, *words):
    err = done.stderr.decode(errors="replace")
    for w in words:
        if w not in err:
            fail("%s: stderr lacks %r: %r" % (what, w, err[-800:]))


def stored_codes(db_path):
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, timeout=10)
    try:
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        codes = [row[0] for row in db.execute("SELECT code FROM runs ORDER BY id")]
    finally:
        db.close()
    return check, codes


def expect_earlier_rows(what, db_path, earlier):
    try:
        check, codes = stored_codes(db_path)
    except sqlite3.Error as e:
        fail("%s: the history cannot be read afterwards: %s" % (what, e))
        return
    if check != "ok":
        fail("%s: history integrity_check: %s" % (what, check))
    for code in earlier:
        if code not in codes:
            fail("%s: the stored run %r was lost" % (what, code))


def record_earlier(args, env, what):
    earlier = ["echo earlier-1", "echo earlier-2"]
    for code in earlier:
        done = run_cli(args, env, code=code)
        if done.returncode != 0 or b"not recorded" in done.stderr:
            fail("%s: could not record the earlier runs: %r" % (what, done.stderr[-300:]))
    return earlier


def fill(path):
    """Writes `path` until its file system has no block left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def fault_locked(args, work):
    """Another process holds the history's write lock for longer than cordon waits."""
    env = base_env(args, work)
    db_path = env["CORDON_HISTORY_PATH"]
    earlier = record_earlier(args, env, "locked")
    holder = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = run_cli(args, env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    expect_result("locked", done)
    expect_message("locked", done, "not recorded in history", db_path, "locked")
    expect_earlier_rows("locked", db_path, earlier)
    again = run_cli(args, env, code="echo after")
    if b"not recorded" in again.stderr:
        fail("locked: a run after the lock was released was not recorded")


def fault_corrupt(args, work):
    """The history file is garbage: cordon says so and never overwrites it."""
    env = base_env(args, work)
    db_path = env["CORDON_HISTORY_PATH"]
    garbage = random.Random(13).randbytes(64 * 1024)
    with open(db_path, "wb") as f:
        f.write(garbage)
    done = run_cli(args, env)
    expect_result("corrupt", done)
    expect_message("corrupt", done, "not recorded in history", db_path, "not a history database")
    if read(db_path) != garbage:
        fail("corrupt: the corrupt file was changed (it may be someone's data)")


def fault_full_disk(args, work):
    """The history's file system is full (a 1 MiB tmpfs in this private mount namespace)."""
    disk = os.path.join(work, "disk")
    os.makedirs(disk)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk], check=True)
    env = base_env(args, work)
    db_path = env["CORDON_HISTORY_PATH"] = os.path.join(disk, "history.sqlite3")
    earlier = record_earlier(args, env, "full disk")
    filler = os.path.join(disk, "filler")
    fill(filler)
    # A record bigger than what could still fit in a partial page.
    done = run_cli(args, env, code="head -c 200000 /dev/zero | tr '\\0' x >/dev/null; " + RESULT_CODE)
    expect_result("full disk", done)
    expect_message("full disk", done, "not recorded in history", db_path, "full")
    os.unlink(filler)
    expect_earlier_rows("full disk", db_path, earlier)
    again = run_cli(args, env, code="echo after")
    if b"not recorded" in again.stderr:
        fail("full disk: a run after space came back was not recorded: %r" % again.stderr[-300:])


def fault_shm_full(args, work):
    """/dev/shm is full (a 64 KiB tmpfs over it in this private mount namespace)."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", "/dev/shm"], check=True)
    fill("/dev/shm/filler")
    env = base_env(args, work)
    # The real default: where run directories and the container runtime dir go.
    env.pop("CORDON_RUN_DIR", None)
    env.pop("CORDON_RUNTIME_DIR", None)
    env.pop("TMPDIR", None)
    for backend in ("namespace", "container"):
        done = run_cli(args, env, backend=backend)
        expect_result("/dev/shm full, %s" % backend, done)


def fault_audit_unwritable(args, work):
    """The audit report directory is on a read-only file system."""
    audit = os.path.join(work, "audit")
    os.makedirs(audit)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", audit], check=True)
    env = base_env(args, work)
    env["CORDON_AUDIT_DIR"] = audit
    done = subprocess.run([args.cordon, "audit", "-b", "namespace"], env=env, capture_output=True,
                          timeout=600, check=False)
    if done.returncode != 0 or b"namespace" not in done.stdout:
        fail("audit dir unwritable: the audit's result was not delivered: exit %d, %r"
             % (done.returncode, done.stderr[-500:]))
    expect_message("audit dir unwritable", done, "report not stored", audit, "Read-only file system")


def fault_runtime_missing(args, work):
    """The helper binary a long-lived cordon execs is deleted while it runs (a copy)."""
    libexec = os.path.join(work, "libexec")
    os.makedirs(libexec)
    source = os.environ.get("CORDON_TEST_LIBEXEC_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.realpath(args.cordon))), "libexec")
    env = base_env(args, work)
    env["CORDON_LIBEXEC_DIR"] = libexec
    # cordon-init is every backend's init (its roles); each backend gets a fresh copy to lose.
    helper = "cordon-init"
    for backend in ("namespace", "container"):
        shutil.copy2(os.path.join(source, helper), libexec)
        what = "%s missing mid-life (%s)" % (helper, backend)
        mcp = Mcp(args, env, pool=1, backend=backend)
        try:
            if not mcp.initialize():
                fail(what + ": no answer to initialize")
                continue
            replies = []
            for i in range(4):
                if i == 1:
                    os.unlink(os.path.join(libexec, helper))
                # Default limits (a pooled sandbox, then fresh ones) and other limits.
                mcp.call(10 + i, "echo out-%d" % i, language="sh")
                replies.append(mcp.line(60))
            for i, reply in enumerate(replies):
                text = json.dumps(reply)
                if reply is None or reply.get("result", {}).get("isError", True) or "out-%d" % i not in text:
                    fail("%s: call %d did not deliver its result: %s" % (what, i, text[:600]))
            mcp.proc.stdin.close()
            if mcp.proc.wait(60) != 0:
                fail("%s: the server exited %d" % (what, mcp.proc.returncode))
        finally:
            if mcp.proc.poll() is None:
                kill_and_reap(mcp.proc)
        shutil.copy2(os.path.join(source, helper), libexec)


FAULTS = {
    "locked": (fault_locked, False),
    "corrupt": (fault_corrupt, False),
    "full-disk": (fault_full_disk, True),
    "shm-full": (fault_shm_full, True),
    "audit-unwritable": (fault_audit_unwritable, True),
    "runtime-missing": (fault_runtime_missing, False),
}


def command_faults(args):
    names = args.only.split(",") if args.only else list(FAULTS)
    for name in names:
        func, private_mounts = FAULTS[name]
        work = tempfile.mkdtemp(prefix="crash-fault-")
        begin = time.monotonic()
        before = len(FAILURES)
        if private_mounts and not args.in_namespace:
            # Mounts go into a mount namespace of this child only: never the host's own.
            done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                                   os.path.realpath(__file__), "faults", "--cordon", args.cordon,
                                   "--only", name, "--in-namespace", "--work", work],
                                  capture_output=True, timeout=900, check=False)
            sys.stdout.write(done.stdout.decode(errors="replace"))
            if done.returncode != 0:
                fail("fault %s (in a private mount namespace): exit %d %s"
                     % (name, done.returncode, done.stderr.decode(errors="replace")[-500:]))
        else:
            func(args, args.work or work)
        if not args.in_namespace:
            print("fault %s: %s in %.1f s" % (name, "ok" if len(FAILURES) == before else "FAILED",
                                              time.monotonic() - begin), flush=True)
        if len(FAILURES) == before:
            shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    k = sub.add_parser("kill")
    k.add_argument("--cordon", required=True)
    k.add_argument("--backend", required=True)
    k.add_argument("--runtime", default="")
    k.add_argument("--kills", type=int, default=20)
    k.add_argument("--seed", type=int, default=None)
    w = sub.add_parser("writers")
    w.add_argument("--cordon", required=True)
    w.add_argument("--per-writer", type=int, default=250)
    f = sub.add_parser("faults")
    f.add_argument("--cordon", required=True)
    f.add_argument("--only", default="")
    f.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    f.add_argument("--work", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if getattr(args, "seed", 0) is None:
        args.seed = random.randrange(1 << 30)
    commands = {"kill": command_kill, "writers": command_writers, "faults": command_faults}
    commands[args.command](args)
    for f in FAILURES:
        print("FAILED: " + f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
